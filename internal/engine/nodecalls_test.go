package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/clusterversion"
	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/nodecall"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/ru"
)

// Writes through a node that does not lead their partition travel as JSON while the cluster's
// version is the previous release's (its nodes read nothing else), and as typed messages once
// it is this release's; both are applied alike.
func TestForwardedWritesByClusterVersion(t *testing.T) {
	for _, v := range []clusterversion.Version{clusterversion.V2, clusterversion.NodeMessages} {
		t.Run(v.String(), func(t *testing.T) {
			tc := newTestCluster(t, 3)
			tc.active = v
			for id := 1; id <= 3; id++ {
				tc.start(id)
			}
			tc.createContainer(nil)
			var cs []*Container
			for id := 1; id <= 3; id++ {
				c, err := tc.node(id).Container("db", "c")
				if err != nil {
					t.Fatal(err)
				}
				cs = append(cs, c)
			}
			for i := range 30 {
				eventually(t, fmt.Sprint("create ", i), func() error {
					_, err := cs[i%3].CreateItem(item(fmt.Sprint(i), fmt.Sprint("k", i%5), ""), ItemOptions{})
					if errors.Is(err, fault.Conflict) {
						return nil
					}
					return err
				})
			}
			for i := range 30 {
				if _, err := cs[(i+1)%3].ReadItem(key(fmt.Sprint("k", i%5)), fmt.Sprint(i)); err != nil {
					t.Fatalf("item %d: %v", i, err)
				}
			}
			typed, untyped := tc.typed.Load(), tc.untyped.Load()
			switch {
			case v < clusterversion.NodeMessages && (typed > 0 || untyped == 0):
				t.Fatalf("at %s: %d typed and %d JSON requests, want JSON only", v, typed, untyped)
			case v >= clusterversion.NodeMessages && (typed == 0 || untyped > 0):
				t.Fatalf("at %s: %d typed and %d JSON requests, want typed only", v, typed, untyped)
			}
			t.Logf("at %s: %d typed and %d JSON requests", v, typed, untyped)
		})
	}
}

// Every kind of delegated call, made through a node that holds no replica of its partition,
// does what it does locally, whether it travels as JSON (a cluster of the previous release's
// version) or as a typed message.
func TestDelegatedCallsByClusterVersion(t *testing.T) {
	for _, v := range []clusterversion.Version{clusterversion.V2, clusterversion.NodeMessages} {
		t.Run(v.String(), func(t *testing.T) {
			tc := newTestCluster(t, 4)
			tc.active, tc.replicas = v, 3
			for id := 1; id <= 4; id++ {
				tc.start(id)
			}
			tc.createContainer(nil)
			c1 := tc.containerOn(1)
			for _, s := range []Script{
				{Kind: ProcedureScript, ID: "bump", Body: bumpProcedure},
				{Kind: TriggerScript, ID: "stamp", TriggerType: "Pre", TriggerOperation: "All", Body: `function () {
					var r = getContext().getRequest(); if (r.getOperationType() != "Delete") { var d = r.getBody(); d.stamped = 1; r.setBody(d); } }`},
			} {
				if _, err := c1.CreateScript(s); err != nil {
					t.Fatal(err)
				}
			}
			// A node and a partition key whose partition it holds no replica of.
			var c *Container
			var pk string
			eventually(t, "a node without a replica of some partition", func() error {
				for id := 1; id <= 4; id++ {
					cn := tc.containerOn(id)
					for k := range 20 {
						e, err := cn.EPK(key(fmt.Sprint("k", k)))
						if err != nil {
							return err
						}
						if _, ok := cn.remoteOf(e); ok {
							c, pk = cn, fmt.Sprint("k", k)
							return nil
						}
					}
				}
				return errors.New("every node holds every partition")
			})
			tc.typed.Store(0)
			tc.untyped.Store(0)
			incr := Patch{Ops: []document.PatchOp{{Op: "incr", Path: "/n", Value: []byte("1")}}}
			steps := []struct {
				name string
				do   func() error
			}{
				{"create with a trigger", func() error {
					r, err := c.CreateItem(item("a", pk, `,"n":0`), ItemOptions{PreTriggers: []string{"stamp"}})
					if err == nil && (!r.Created || !strings.Contains(string(r.Doc), `"stamped":1`)) {
						err = fmt.Errorf("created %v: %s", r.Created, r.Doc)
					}
					return err
				}},
				{"read", func() error {
					_, err := c.ReadItem(key(pk), "a")
					return err
				}},
				{"patch", func() error {
					_, err := c.PatchItem(key(pk), "a", incr, ItemOptions{})
					return err
				}},
				{"procedure", func() error {
					r, err := c.ExecuteProcedure("bump", []byte(`["a"]`), ProcedureOptions{PartitionKey: key(pk)})
					if err == nil && r.LSN == 0 {
						err = errors.New("no LSN")
					}
					return err
				}},
				{"batch", func() error {
					res, failed, err := c.ExecuteBatch(context.Background(), key(pk), []BatchOp{{Kind: OpPatch, ID: "a", Patch: incr}, {Kind: OpRead, ID: "a"}})
					if err == nil && failed >= 0 {
						err = res[failed].Err
					}
					if err == nil && !strings.Contains(string(res[1].Doc), `"n":3`) {
						err = fmt.Errorf("the batch read %s, want n 3", res[1].Doc)
					}
					return err
				}},
				{"change feed", func() error {
					e, _ := c.EPK(key(pk))
					page, err := c.ChangeFeed(FeedQuery{Range: epk.Range{Min: e, Max: e + "\x00"}})
					if err == nil && (len(page.Changes) != 1 || !strings.Contains(string(page.Changes[0].JSON), `"n":3`)) {
						err = fmt.Errorf("the feed has %d changes", len(page.Changes))
					}
					return err
				}},
				{"delete with a trigger", func() error {
					_, err := c.DeleteItem(key(pk), "a", ItemOptions{PreTriggers: []string{"stamp"}})
					return err
				}},
			}
			for _, s := range steps {
				eventually(t, s.name, s.do)
			}
			if _, err := c.ReadItem(key(pk), "a"); !errors.Is(err, fault.NotFound) {
				t.Fatalf("read after the delete: %v", err)
			}
			typed, untyped := tc.typed.Load(), tc.untyped.Load()
			if v < clusterversion.NodeMessages && typed > 0 || v >= clusterversion.NodeMessages && untyped > 0 {
				t.Fatalf("at %s: %d typed and %d JSON requests", v, typed, untyped)
			}
			t.Logf("at %s: %d typed and %d JSON requests", v, typed, untyped)
		})
	}
}

// A write another node forwards with the Low priority level is admitted as Low where it runs:
// refused while High requests are expected to spend what the second has left, where the same
// write at High runs.
func TestForwardedLowPriorityIsAdmittedAsLow(t *testing.T) {
	e, c := newContainer(t, Options{Replicated: true, RateLimit: true}, ContainerSpec{Throughput: &Throughput{Manual: 400}})
	ek, err := c.EPK(key("p"))
	if err != nil {
		t.Fatal(err)
	}
	p := c.routes.Load().lookup(ek)
	// The start of a second, so that what is spent below stays in it and the one before.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 50*time.Millisecond)))
	now := time.Now()
	p.Budget().Spend(now.Add(-time.Second), 300, ru.High) // High spent 300 of 400 the second before
	p.Budget().Spend(now, 150, ru.Low)                    // Low has spent 150 of this one already
	write := func(id string, low bool) nodecall.Answer {
		return e.ServeCall(nodecall.Request{Container: c.num, EPK: []byte(ek), Admit: true, Low: low,
			Ops: []nodecall.Op{{Kind: uint8(partition.Create), ID: id, Body: item(id, "p", "")}}})
	}
	low, high := write("low", true), write("high", false)
	if time.Since(now) > 900*time.Millisecond {
		t.Skip("the machine was too slow to stay within one second: nothing shown either way")
	}
	if low.Err == nil || low.Err.Kind != fault.Throttled {
		t.Fatalf("a Low write with 250 RU left and 300 expected of High: %+v", low.Err)
	}
	if high.Err != nil {
		t.Fatalf("the same write at High: %v", high.Err)
	}
}
