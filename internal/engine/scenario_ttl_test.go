package engine

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
)

// fakeClock is the engine's clock in scenarios opened with "open clock": it stands still until
// a "clock advance=D" moves it.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1_700_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// scenarioTTL runs the time-to-live commands of the scenarios:
//
//	clock advance=DURATION
//	    moves the engine's fake clock (open clock) forward
//	set-ttl container=C ttl=N|off
//	    replaces the container's default time to live
//	expire
//	    runs the reaper once, from the start of every partition; prints how many it deleted
//	read container=C pk=K id=I
//	    a point read: the item's ttl, or the error
//	op container=C kind=create|upsert|replace|patch|delete pk=K id=I [if-match=ETAG|current]
//	    [pre=TRIGGER] [post=TRIGGER]
//	    one item operation, the input being more properties; prints ok (created) or the error
//	readfeed container=C
//	    the ids the read feed lists
//	stored container=C
//	    how many items the partitions hold, expired ones not yet deleted included
func scenarioTTL(t *testing.T, e *Engine, td *datadriven.TestData, clock *fakeClock) (string, bool) {
	if e == nil {
		return "", false
	}
	var id string
	if td.HasArg("container") {
		td.ScanArgs(t, "container", &id)
	}
	c, _ := e.Container("db", id)
	switch td.Cmd {
	case "clock":
		var d time.Duration
		var s string
		td.ScanArgs(t, "advance", &s)
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatal(err)
		}
		clock.advance(d)
		return fmt.Sprintf("now +%s", clock.Now().Sub(newFakeClock().now)), true
	case "set-ttl":
		var s string
		td.ScanArgs(t, "ttl", &s)
		raw := s
		if s == "off" {
			raw = "null"
		}
		d, err := ParseDefaultTTL([]byte(raw))
		if err == nil {
			_, err = e.ReplaceContainer("db", id, ContainerReplace{DefaultTTL: d})
		}
		if err != nil {
			return err.Error(), true
		}
		return "ok", true
	case "expire":
		return fmt.Sprintf("deleted %d", e.reapOnce(time.Now())), true
	case "read":
		var pk, itemID string
		td.ScanArgs(t, "pk", &pk)
		td.ScanArgs(t, "id", &itemID)
		r, err := c.ReadItem(key(pk), itemID)
		if err != nil {
			return err.Error(), true
		}
		item, _, err := document.Parse(r.Doc, c.paths)
		if err != nil {
			t.Fatal(err)
		}
		if ttl := item.Value.Get("ttl"); !ttl.IsUndefined() {
			return fmt.Sprintf("found, ttl %v", ttl.Num()), true
		}
		return "found", true
	case "op":
		var kind, pk, itemID, ifMatch string
		td.ScanArgs(t, "kind", &kind)
		td.ScanArgs(t, "pk", &pk)
		td.ScanArgs(t, "id", &itemID)
		td.MaybeScanArgs(t, "if-match", &ifMatch)
		bodyID := itemID
		td.MaybeScanArgs(t, "rename", &bodyID) // a replace whose body names another id
		extra := strings.TrimSpace(td.Input)
		if extra != "" {
			extra = "," + extra
		}
		body := item(bodyID, pk, extra)
		o := ItemOptions{IfMatch: ifMatch}
		var pre, post string
		td.MaybeScanArgs(t, "pre", &pre)
		td.MaybeScanArgs(t, "post", &post)
		if pre != "" {
			o.PreTriggers = []string{pre}
		}
		if post != "" {
			o.PostTriggers = []string{post}
		}
		var r ItemResult
		var err error
		switch kind {
		case "create":
			r, err = c.CreateItem(body, o)
		case "upsert":
			r, err = c.UpsertItem(body, o)
		case "replace":
			r, err = c.ReplaceItem(itemID, body, o)
		case "delete":
			r, err = c.DeleteItem(key(pk), itemID, o)
		case "patch":
			r, err = c.PatchItem(key(pk), itemID, Patch{Ops: []document.PatchOp{{Op: "set", Path: "/patched", Value: []byte("true")}}}, o)
		default:
			t.Fatalf("unknown op kind %s", kind)
		}
		if err != nil {
			return scriptError(err), true // a trigger's, without its stack trace
		}
		if r.Created {
			return "ok (created)", true
		}
		return "ok", true
	case "readfeed":
		page, err := c.ReadFeed(epk.All, "", 1000)
		if err != nil {
			return err.Error(), true
		}
		var ids []string
		for _, d := range page.Docs {
			item, _, err := document.Parse(d, c.paths)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, item.ID)
		}
		if len(ids) == 0 {
			return "(none)", true
		}
		return strings.Join(ids, " "), true
	case "stored":
		// how many items the partitions still hold, expired ones included
		var n int64
		for _, p := range c.partitions() {
			n += p.Stats().Items
		}
		return fmt.Sprintf("%d stored", n), true
	}
	return "", false
}
