package controlplane

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
)

// A founding node that lost its etcd member's data (its disk was wiped or replaced) cannot
// start its member as it did when the cluster formed: the other members know a member of its
// name and address that had a log and votes, which the new one does not have. It is replaced,
// as etcd's runbook replaces a failed member: the node asks the running members to remove its
// old member and add a new one at the same address, and starts it as a member joining an
// existing cluster, which receives the cluster's data from the leader.
//
// A founding node without data is also what every node is when the cluster first forms, and a
// late one when the others formed it without it: then the members are not there to answer, or
// list its member as never started, and it starts as the join list says.

// startFoundingMember starts the etcd member of a founding node. A member without data whose
// cluster cannot tell yet whether it knew it (too few members answer) starts as the join list
// says, which etcd refuses when a member that answers knows it was bootstrapped already: then
// its data is gone, and the node waits for the members to answer, and replaces it. A
// replacement that fails (the members stopped answering meanwhile) is tried again, until ctx
// ends.
func startFoundingMember(ctx context.Context, cfg Config, clientURLs []string, initialCluster string, log *slog.Logger) (*embed.Etcd, error) {
	if memberDataExists(cfg.Dir) {
		return startMember(cfg, "new", initialCluster)
	}
	for {
		state, initial, err := replaceLostMember(ctx, cfg, clientURLs, initialCluster, log)
		if err == nil {
			var e *embed.Etcd
			if e, err = startMember(cfg, state, initial); err == nil || !strings.Contains(err.Error(), "has already been bootstrapped") {
				return e, err
			}
			log.Warn("this founding node has no control-plane data, and its member is known to the cluster: waiting for a majority of the founding nodes to replace it", "err", err)
			os.RemoveAll(filepath.Join(cfg.Dir, "etcd")) // what the refused start left
		} else {
			log.Warn("replacing this founding node's lost control-plane member failed; trying again", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("controlplane: replacing this node's lost member: %w", err)
		case <-time.After(time.Second):
		}
	}
}

// memberDataExists reports whether the node's etcd member has data (its write-ahead log).
func memberDataExists(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "etcd", "member", "wal"))
	return err == nil
}

// replaceTimeout bounds the wait for the other members' answer before a member without data
// starts as the join list says (the cluster is forming).
const replaceTimeout = 3 * time.Second

// replaceLostMember returns how the member of a founding node without data starts: the etcd
// cluster state ("new" or "existing") and the initial cluster to start with, replacing its
// old member first when the running members knew one that had started (above).
func replaceLostMember(ctx context.Context, cfg Config, clientURLs []string, initialCluster string, log *slog.Logger) (string, string, error) {
	peer, own, err := ports(cfg.Addr)
	if err != nil {
		return "", "", err
	}
	peerURL := "https://" + peer
	var others []string
	for _, u := range clientURLs {
		if u != "https://"+own {
			others = append(others, u)
		}
	}
	if len(others) == 0 {
		return "new", initialCluster, nil // a cluster of one: nobody to ask
	}
	c, err := clientv3.New(clientv3.Config{Endpoints: others, TLS: cfg.TLS.Client(), DialTimeout: replaceTimeout, Logger: quietLogger()})
	if err != nil {
		return "", "", err
	}
	defer c.Close()
	ask, cancel := context.WithTimeout(ctx, replaceTimeout)
	members, err := c.MemberList(ask)
	cancel()
	if err != nil {
		return "new", initialCluster, nil // no running cluster answers: it is forming
	}
	i := slices.IndexFunc(members.Members, func(m *etcdserverpb.Member) bool { return slices.Contains(m.PeerURLs, peerURL) })
	if i >= 0 && members.Members[i].Name == "" {
		return "new", initialCluster, nil // listed, never started: the cluster formed without it
	}
	log.Warn("this founding node has no control-plane data but the cluster knew its member: replacing the member (its disk was wiped?)")
	// etcd refuses a change while its members have not all been connected for a few seconds
	// (its strict reconfiguration check): each is tried again until it passes.
	change, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if i >= 0 {
		if err := untilAccepted(change, func(ctx context.Context) error {
			_, err := c.MemberRemove(ctx, members.Members[i].ID)
			if errors.Is(err, rpctypes.ErrMemberNotFound) {
				return nil // removed by a try whose answer was lost
			}
			return err
		}); err != nil {
			return "", "", fmt.Errorf("controlplane: removing this node's lost etcd member: %w", err)
		}
	}
	var added *clientv3.MemberAddResponse
	if err := untilAccepted(change, func(ctx context.Context) (err error) {
		added, err = c.MemberAdd(ctx, []string{peerURL})
		return err
	}); err != nil {
		return "", "", fmt.Errorf("controlplane: adding this node's etcd member again: %w", err)
	}
	var initial []string
	for _, m := range added.Members {
		name := m.Name
		if m.ID == added.Member.ID {
			name = memberName(cfg.Addr)
		}
		if name == "" {
			return "", "", errors.New("controlplane: another founding member has not started yet; start it before replacing this one")
		}
		for _, u := range m.PeerURLs {
			initial = append(initial, name+"="+u)
		}
	}
	return "existing", strings.Join(initial, ","), nil
}

// untilAccepted calls change until it succeeds, or fails with an error other than etcd's
// "unhealthy cluster" (a membership change refused for now), or ctx ends.
func untilAccepted(ctx context.Context, change func(context.Context) error) error {
	for {
		err := change(ctx)
		if err == nil || !errors.Is(err, rpctypes.ErrUnhealthy) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(500 * time.Millisecond):
		}
	}
}
