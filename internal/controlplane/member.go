package controlplane

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
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
// name and address that had a log and votes, which the new one does not have. Started with its
// old identity, it would join with an empty log and no memory of its votes, and Raft's safety
// rests on neither being forgotten: a majority that counted it could lose committed entries.
// It is replaced instead, as etcd's runbook replaces a failed member: the node asks the running
// members to remove its old member and add a new one at the same address, and starts it as a
// member joining an existing cluster, which receives the cluster's data from the leader.
//
// A founding node without data is also what every node is when the cluster first forms, and a
// late one when the others formed it without it. The node tells which by asking the other
// founding nodes, and starts only once it knows:
//
//   - a running member's view of the membership (its peer port answers without a quorum)
//     lists this node's member as started, or no longer lists it: the member is replaced;
//   - a view lists it as added but never started (a replacement interrupted before the member
//     started): it starts as that member, joining the existing cluster;
//   - views list it as never started, from the join list: the cluster formed without it, or is
//     forming; it starts as the join list says;
//   - no member runs, and a founding node's process answers that it has no data either: the
//     cluster is forming, and it starts as the join list says.
//
// Otherwise (the nodes with data are down) it waits: starting as the join list says then is
// the amnesia above. Only the loss of a majority of the founding nodes' data at once is beyond
// this, as it is beyond Raft: those nodes form the cluster again from nothing.

// startFoundingMember starts the etcd member of a founding node, deciding as above when it has
// no data; it tries again until ctx ends.
func startFoundingMember(ctx context.Context, cfg Config, clientURLs []string, initialCluster string, log *slog.Logger) (*embed.Etcd, error) {
	if memberDataExists(cfg.Dir) {
		return startMember(cfg, "new", initialCluster)
	}
	var told time.Time // when the wait was last logged
	for {
		state, initial, why, err := startWithoutData(ctx, cfg, clientURLs, initialCluster, log)
		if err == nil && state != "" {
			var e *embed.Etcd
			if e, err = startMember(cfg, state, initial); err == nil || !strings.Contains(err.Error(), "has already been bootstrapped") {
				return e, err
			}
			os.RemoveAll(filepath.Join(cfg.Dir, "etcd")) // what the refused start left
		}
		if err != nil {
			log.Warn("this founding node has no control-plane data, and starting its member failed; trying again", "err", err)
		} else if state == "" && time.Since(told) > waitLogEvery {
			told = time.Now()
			log.Warn("this founding node has no control-plane data, and no other founding node has told yet whether the cluster formed; waiting", "why", why)
		}
		select {
		case <-ctx.Done():
			if err == nil && why != nil {
				err = fmt.Errorf("%w; the other founding nodes: %w", ctx.Err(), why)
			}
			return nil, fmt.Errorf("controlplane: starting this founding node's member without data: %w", cmp.Or(err, ctx.Err()))
		case <-time.After(time.Second):
		}
	}
}

// HasMemberData reports whether the etcd member of the node whose control-plane directory is
// dir (Config.Dir) has data: what a node answers another's Config.HasData with.
func HasMemberData(dir string) bool { return memberDataExists(dir) }

// memberDataExists reports whether the node's etcd member has data (its write-ahead log).
func memberDataExists(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "etcd", "member", "wal"))
	return err == nil
}

// askTimeout bounds each question to another founding node; replaceTimeout the wait for the
// running members' answers during a replacement; waitLogEvery how often a founding node that
// cannot tell yet says so, and why.
const (
	askTimeout     = time.Second
	replaceTimeout = 3 * time.Second
	waitLogEvery   = 30 * time.Second
)

// startWithoutData returns how the member of a founding node without data starts (see above):
// the etcd cluster state ("new" or "existing") and the initial cluster, or no state while it
// cannot tell yet, and why (what the other founding nodes answered).
func startWithoutData(ctx context.Context, cfg Config, clientURLs []string, initialCluster string, log *slog.Logger) (state, initial string, why error, err error) {
	peer, _, err := ports(cfg.Addr)
	if err != nil {
		return "", "", nil, err
	}
	if len(cfg.Join) == 1 {
		return "new", initialCluster, nil, nil // a cluster of one: nobody to ask, nobody to forget
	}
	self := "https://" + peer
	views := 0
	var added []viewMember
	var answers []error
	for _, a := range cfg.Join {
		if a == cfg.Addr {
			continue
		}
		view, err := membershipView(ctx, cfg, a)
		if err != nil {
			answers = append(answers, fmt.Errorf("%s's membership: %w", a, err))
			continue
		}
		views++
		i := slices.IndexFunc(view, func(m viewMember) bool { return slices.Contains(m.PeerURLs, self) })
		switch {
		case i < 0 || len(view[i].ClientURLs) > 0:
			state, initial, err := replaceLostMember(ctx, cfg, clientURLs, log)
			return state, initial, nil, err
		case view[i].Name == "":
			added = view
		}
	}
	if added != nil {
		return "existing", initialOf(added, self, memberName(cfg.Addr)), nil, nil
	}
	if views > 0 {
		return "new", initialCluster, nil, nil
	}
	if cfg.HasData != nil {
		for _, a := range cfg.Join {
			if a == cfg.Addr {
				continue
			}
			c, cancel := context.WithTimeout(ctx, askTimeout)
			has, err := cfg.HasData(c, a)
			cancel()
			switch {
			case err != nil:
				answers = append(answers, fmt.Errorf("%s's process: %w", a, err))
			case !has:
				return "new", initialCluster, nil, nil
			default:
				answers = append(answers, fmt.Errorf("%s has control-plane data, but its member does not answer", a))
			}
		}
	}
	return "", "", errors.Join(answers...), nil
}

// viewMember is a member as a running member's peer port lists it.
type viewMember struct {
	Name       string   `json:"name"`
	PeerURLs   []string `json:"peerURLs"`
	ClientURLs []string `json:"clientURLs"` // set once the member started and published them
}

// membershipView is the membership as the member of founding node addr knows it, read from
// its peer port, which answers from the member's own state, without a quorum.
func membershipView(ctx context.Context, cfg Config, addr string) ([]viewMember, error) {
	peer, _, err := ports(addr)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, askTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+peer+"/members", nil)
	if err != nil {
		return nil, err
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg.TLS.Client()}}
	defer hc.CloseIdleConnections()
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("controlplane: %s's membership: %s", addr, resp.Status)
	}
	var view []viewMember
	err = json.NewDecoder(resp.Body).Decode(&view)
	return view, err
}

// initialOf is the initial cluster of a member joining the members of view, self among them
// under its name.
func initialOf(view []viewMember, self, name string) string {
	var initial []string
	for _, m := range view {
		n := m.Name
		if slices.Contains(m.PeerURLs, self) {
			n = name
		}
		for _, u := range m.PeerURLs {
			initial = append(initial, n+"="+u)
		}
	}
	return strings.Join(initial, ",")
}

// replaceLostMember replaces the old member of a founding node without data (above), through
// the running members, and returns how the new one starts. It needs a majority of them.
func replaceLostMember(ctx context.Context, cfg Config, clientURLs []string, log *slog.Logger) (string, string, error) {
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
	c, err := clientv3.New(clientv3.Config{Endpoints: others, TLS: cfg.TLS.Client(), DialTimeout: replaceTimeout, Logger: quietLogger()})
	if err != nil {
		return "", "", err
	}
	defer c.Close()
	ask, cancel := context.WithTimeout(ctx, replaceTimeout)
	members, err := c.MemberList(ask)
	cancel()
	if err != nil {
		return "", "", fmt.Errorf("controlplane: listing the members to replace this node's: %w", err)
	}
	i := slices.IndexFunc(members.Members, func(m *etcdserverpb.Member) bool { return slices.Contains(m.PeerURLs, peerURL) })
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
	var view []viewMember
	for _, m := range added.Members {
		if m.Name == "" && m.ID != added.Member.ID {
			return "", "", errors.New("controlplane: another founding member has not started yet; start it before replacing this one")
		}
		view = append(view, viewMember{Name: m.Name, PeerURLs: m.PeerURLs})
	}
	return "existing", initialOf(view, peerURL, memberName(cfg.Addr)), nil
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
