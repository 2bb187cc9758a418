package controlplane

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Where each partition's replicas are. A group's leader records its voters and itself, so
// that a node holding no replica of a partition knows where to send what it is asked for it,
// and so that placement counts the replicas each node holds. A record may lag the group by a
// pass of the placement loop; a node that finds it stale asks again.

// groupsPrefix holds one record per Raft group, by group id in hex.
const groupsPrefix = "/partita/groups/"

// Group is where a group's replicas are.
type Group struct {
	// Voters are the nodes of the group's voting replicas; Learners those of the replicas
	// being added.
	Voters   []uint64 `json:"voters"`
	Learners []uint64 `json:"learners,omitempty"`
	// Leader is the node whose replica led the group when it was recorded.
	Leader uint64 `json:"leader"`
}

func groupKey(id uint64) string { return groupsPrefix + strconv.FormatUint(id, 16) }

// PutGroup records group id's replicas.
func (cp *ControlPlane) PutGroup(ctx context.Context, id uint64, g Group) error {
	b, err := json.Marshal(g)
	if err != nil {
		return err
	}
	_, err = cp.client.Put(ctx, groupKey(id), string(b))
	return err
}

// DeleteGroup forgets group id (its partition was split, or its container deleted).
func (cp *ControlPlane) DeleteGroup(ctx context.Context, id uint64) error {
	_, err := cp.client.Delete(ctx, groupKey(id))
	return err
}

// GroupOf is group id's record; false when there is none.
func (cp *ControlPlane) GroupOf(ctx context.Context, id uint64) (Group, bool, error) {
	resp, err := cp.client.Get(ctx, groupKey(id))
	if err != nil || len(resp.Kvs) == 0 {
		return Group{}, false, err
	}
	var g Group
	if err := json.Unmarshal(resp.Kvs[0].Value, &g); err != nil {
		return Group{}, false, fmt.Errorf("controlplane: group record %x: %w", id, err)
	}
	return g, true, nil
}

// Groups are every group's record, by group id.
func (cp *ControlPlane) Groups(ctx context.Context) (map[uint64]Group, error) {
	resp, err := cp.client.Get(ctx, groupsPrefix, clientv3.WithPrefix())
	if err != nil {
		return nil, err
	}
	out := make(map[uint64]Group, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		id, err := strconv.ParseUint(strings.TrimPrefix(string(kv.Key), groupsPrefix), 16, 64)
		if err != nil {
			return nil, fmt.Errorf("controlplane: group record %s: %w", kv.Key, err)
		}
		var g Group
		if err := json.Unmarshal(kv.Value, &g); err != nil {
			return nil, fmt.Errorf("controlplane: group record %s: %w", kv.Key, err)
		}
		out[id] = g
	}
	return out, nil
}

// settingsPrefix holds the cluster's settings, each fixed by the first node that proposes it.
const settingsPrefix = "/partita/settings/"

// Setting is the cluster's value of setting name: the one recorded, or proposed when none is
// (the cluster's first node fixes it for good).
func (cp *ControlPlane) Setting(ctx context.Context, name, proposed string) (string, error) {
	key := settingsPrefix + name
	resp, err := cp.client.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, proposed)).Else(clientv3.OpGet(key)).Commit()
	if err != nil {
		return "", err
	}
	if resp.Succeeded {
		return proposed, nil
	}
	return string(resp.Responses[0].GetResponseRange().Kvs[0].Value), nil
}
