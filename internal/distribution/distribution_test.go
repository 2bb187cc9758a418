package distribution_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/partita-db/partita/internal/distribution"
	"github.com/partita-db/partita/internal/nodecall"
	"github.com/partita-db/partita/internal/replication"
)

// TestDistribution runs the scenarios of testdata/: group records as the control plane holds
// them, nodes that answer as written, and whom a request asks, in what order and when, with a
// manual clock. The commands:
//
//	records               a group a line: "g1 leader=n2 voters=(n2,n3)"; versions after
//	                      " | " are what the map holds the next times it is read
//	nodes                 a node a line: "n2 OUTCOME..." (moved, not-sent, lost, codec,
//	                      answer), one call each, the last repeated
//	holders groups=(g1, ...) [fallback=(n1, ...)]
//	                      the nodes to ask for the first group with a record
//	ask KIND groups=(g1, ...) [fallback=(...)] [self=N] [timeout=D]
//	                      KIND is read, write, call-read or call-write: each call made (the
//	                      clock's time, the node, what it did), each round's forget, and the
//	                      outcome
func TestDistribution(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		m := &fakeMap{versions: map[replication.GroupID][]distribution.GroupRecord{}}
		dir := distribution.NewDirectory(m)
		nodes := map[replication.NodeID][]string{}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "records":
				m.parse(t, d.Input)
				dir = distribution.NewDirectory(m)
				return ""
			case "nodes":
				nodes = map[replication.NodeID][]string{}
				for _, line := range lines(d.Input) {
					f := strings.Fields(line)
					nodes[node(t, f[0])] = f[1:]
				}
				return ""
			case "holders":
				return names(dir.Holders(context.Background(), groupsArg(t, d), nodesArg(t, d, "fallback"))) + "\n"
			case "ask":
				return ask(t, d, dir, nodes)
			}
			t.Fatalf("%s: unknown command %s", d.Pos, d.Cmd)
			return ""
		})
	})
}

func ask(t *testing.T, d *datadriven.TestData, dir *distribution.Directory, nodes map[replication.NodeID][]string) string {
	var out strings.Builder
	clock := &manualClock{}
	calls := map[replication.NodeID]int{}
	self := replication.NodeID(1)
	if d.HasArg("self") {
		var s string
		d.ScanArgs(t, "self", &s)
		self = node(t, s)
	}
	a := &distribution.Asker{Self: self, Clock: clock}
	if d.HasArg("timeout") {
		var s string
		d.ScanArgs(t, "timeout", &s)
		var err error
		if a.Timeout, err = time.ParseDuration(s); err != nil {
			t.Fatalf("%s: %v", d.Pos, err)
		}
	}
	a.Call = func(_ context.Context, n replication.NodeID, _ *nodecall.Request) (nodecall.Answer, error) {
		script, ok := nodes[n]
		if !ok {
			t.Fatalf("%s: node n%d asked, but has no script", d.Pos, n)
		}
		what := script[min(calls[n], len(script)-1)]
		calls[n]++
		fmt.Fprintf(&out, "%s n%d: %s\n", clock.elapsed, n, what)
		switch what {
		case "answer":
			return nodecall.Answer{Charge: float64(n)}, nil
		case "moved":
			return nodecall.Answer{Moved: true}, nil
		case "not-sent":
			return nodecall.Answer{}, fmt.Errorf("%w: no connection", distribution.ErrNotSent)
		case "codec":
			return nodecall.Answer{}, fmt.Errorf("%w: garbled", nodecall.ErrCodec)
		case "lost": // the node took the request and its answer never came
			clock.advance(distribution.DefaultCallTimeout)
			return nodecall.Answer{}, context.DeadlineExceeded
		}
		t.Fatalf("%s: unknown outcome %s", d.Pos, what)
		return nodecall.Answer{}, nil
	}
	req := &nodecall.Request{}
	switch kind := d.CmdArgs[0].Key; kind {
	case "read":
		req.Read = &nodecall.Read{}
	case "write":
		req.Ops = []nodecall.Op{{ID: "a"}}
	case "call-read":
		req.Call = &nodecall.Call{Method: nodecall.CallRead}
	case "call-write":
		req.Call = &nodecall.Call{Method: nodecall.CallWrite}
	default:
		t.Fatalf("%s: unknown kind %s", d.Pos, kind)
	}
	gs, fallback := groupsArg(t, d), nodesArg(t, d, "fallback")
	ans, err := a.Ask(context.Background(),
		func() []replication.NodeID { return dir.Holders(context.Background(), gs, fallback) },
		func() {
			fmt.Fprintf(&out, "%s forget\n", clock.elapsed)
			dir.Forget(func(replication.GroupID) bool { return true })
		}, req)
	switch {
	case errors.Is(err, distribution.ErrNoHolder):
		fmt.Fprintf(&out, "%s no holder answered (%d sent)\n", clock.elapsed, a.Sent())
	case err != nil:
		fmt.Fprintf(&out, "%s failed: %v\n", clock.elapsed, err)
	default:
		fmt.Fprintf(&out, "%s answered by n%d\n", clock.elapsed, int(ans.Charge))
	}
	return out.String()
}

// manualClock is time that passes only when the code under test sleeps or a call times out.
type manualClock struct{ elapsed time.Duration }

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func (c *manualClock) Now() time.Time          { return epoch.Add(c.elapsed) }
func (c *manualClock) Sleep(d time.Duration)   { c.elapsed += d }
func (c *manualClock) advance(d time.Duration) { c.elapsed += d }

// fakeMap is a GroupMap whose records change each time they are read, as written.
type fakeMap struct {
	versions map[replication.GroupID][]distribution.GroupRecord
	reads    map[replication.GroupID]int
}

func (m *fakeMap) parse(t *testing.T, input string) {
	m.versions, m.reads = map[replication.GroupID][]distribution.GroupRecord{}, map[replication.GroupID]int{}
	for _, line := range lines(input) {
		name, rest, _ := strings.Cut(line, " ")
		g := group(t, name)
		for _, v := range strings.Split(rest, "|") {
			var rec distribution.GroupRecord
			for _, f := range strings.Fields(v) {
				k, val, _ := strings.Cut(f, "=")
				switch k {
				case "leader":
					rec.Leader = node(t, val)
				case "voters":
					rec.Voters = nodeList(t, val)
				case "learners":
					rec.Learners = nodeList(t, val)
				default:
					t.Fatalf("unknown field %s", f)
				}
			}
			m.versions[g] = append(m.versions[g], rec)
		}
	}
}

func (m *fakeMap) Get(_ context.Context, g replication.GroupID) (distribution.GroupRecord, bool, error) {
	vs, ok := m.versions[g]
	if !ok {
		return distribution.GroupRecord{}, false, nil
	}
	rec := vs[min(m.reads[g], len(vs)-1)]
	m.reads[g]++
	return rec, true, nil
}

func (m *fakeMap) Put(context.Context, replication.GroupID, distribution.GroupRecord) error {
	return errors.New("fakeMap is read only")
}

func (m *fakeMap) All(context.Context) (map[replication.GroupID]distribution.GroupRecord, error) {
	return nil, errors.New("fakeMap lists nothing")
}

func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func node(t *testing.T, s string) replication.NodeID {
	n, err := strconv.ParseUint(strings.TrimPrefix(s, "n"), 10, 64)
	if err != nil || !strings.HasPrefix(s, "n") {
		t.Fatalf("bad node %q", s)
	}
	return replication.NodeID(n)
}

func group(t *testing.T, s string) replication.GroupID {
	n, err := strconv.ParseUint(strings.TrimPrefix(s, "g"), 10, 64)
	if err != nil || !strings.HasPrefix(s, "g") {
		t.Fatalf("bad group %q", s)
	}
	return replication.GroupID(n)
}

func nodeList(t *testing.T, s string) []replication.NodeID {
	var out []replication.NodeID
	for _, f := range strings.Split(strings.Trim(s, "()"), ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, node(t, f))
		}
	}
	return out
}

func groupsArg(t *testing.T, d *datadriven.TestData) []replication.GroupID {
	var out []replication.GroupID
	for _, arg := range d.CmdArgs {
		if arg.Key == "groups" {
			for _, v := range arg.Vals {
				out = append(out, group(t, v))
			}
		}
	}
	return out
}

func nodesArg(t *testing.T, d *datadriven.TestData, key string) []replication.NodeID {
	var out []replication.NodeID
	for _, arg := range d.CmdArgs {
		if arg.Key == key {
			for _, v := range arg.Vals {
				out = append(out, node(t, v))
			}
		}
	}
	return out
}

func names(ns []replication.NodeID) string {
	if len(ns) == 0 {
		return "none"
	}
	var parts []string
	for _, n := range ns {
		parts = append(parts, fmt.Sprintf("n%d", n))
	}
	return strings.Join(parts, " ")
}
