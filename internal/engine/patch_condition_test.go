package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/query"
)

func mustCondition(t *testing.T, text string) *query.Condition {
	t.Helper()
	cond, err := query.PrepareCondition(text)
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	return cond
}

// A conditional patch applies only when its condition holds for the current version; false and
// undefined both refuse it with PreconditionFailed and leave the item as it was.
func TestConditionalPatch(t *testing.T) {
	_, c := newContainer(t, Options{}, ContainerSpec{})
	created := mustCreate(t, c, item("a", "p", `,"stock":2,"tags":["x"],"info":{"state":"open","n":[1,2]}`))
	incr := []document.PatchOp{{Op: "incr", Path: "/stock", Value: []byte("-1")}}

	for _, cond := range []string{
		"FROM c WHERE c.stock > 5",                                           // false
		"FROM c WHERE c.missing > 0",                                         // undefined
		"from c where c.info.state = 'closed'",                               // nested path, false
		"FROM c WHERE ARRAY_CONTAINS(c.tags, 'z')",                           // function, false
		"FROM c WHERE EXISTS(SELECT VALUE t FROM t IN c.tags WHERE t = 'y')", // subquery, false
		"FROM root r JOIN t IN r.tags WHERE t = 'y'",                         // no row passes
	} {
		_, err := c.PatchItem(key("p"), "a", Patch{Ops: incr, Condition: mustCondition(t, cond)}, ItemOptions{})
		if !errors.Is(err, fault.PreconditionFailed) {
			t.Fatalf("%s: got %v, want PreconditionFailed", cond, err)
		}
	}
	read, err := c.ReadItem(key("p"), "a")
	if err != nil || read.ETag != created.ETag || !strings.Contains(string(read.Doc), `"stock":2`) {
		t.Fatalf("refused patches changed the item: %s %v", read.Doc, err)
	}

	for i, cond := range []string{
		"FROM c WHERE c.stock > 0",
		"from c where c.info.state = 'open' AND c.info.n[1] = 2 AND LOWER(c.id) = 'a'",
	} {
		r, err := c.PatchItem(key("p"), "a", Patch{Ops: incr, Condition: mustCondition(t, cond)}, ItemOptions{})
		if want := `"stock":` + string(rune('1'-i)); err != nil || !strings.Contains(string(r.Doc), want) {
			t.Fatalf("%s: %s %v, want %s", cond, r.Doc, err, want)
		}
	}
	// stock is 0 now: the first condition no longer holds.
	if _, err := c.PatchItem(key("p"), "a", Patch{Ops: incr, Condition: mustCondition(t, "FROM c WHERE c.stock > 0")}, ItemOptions{}); !errors.Is(err, fault.PreconditionFailed) {
		t.Fatalf("stock 0: %v", err)
	}
}

// If-Match and the condition must both hold.
func TestConditionalPatchWithIfMatch(t *testing.T) {
	_, c := newContainer(t, Options{}, ContainerSpec{})
	created := mustCreate(t, c, item("a", "p", `,"n":1`))
	set := []document.PatchOp{{Op: "set", Path: "/n", Value: []byte("2")}}
	yes, no := mustCondition(t, "FROM c WHERE c.n = 1"), mustCondition(t, "FROM c WHERE c.n = 5")
	for _, tc := range []struct {
		cond    *query.Condition
		ifMatch string
	}{
		{yes, "stale"},
		{no, created.ETag},
		{no, "*"},
	} {
		if _, err := c.PatchItem(key("p"), "a", Patch{Ops: set, Condition: tc.cond}, ItemOptions{IfMatch: tc.ifMatch}); !errors.Is(err, fault.PreconditionFailed) {
			t.Fatalf("if-match %q: %v", tc.ifMatch, err)
		}
	}
	if _, err := c.PatchItem(key("p"), "a", Patch{Ops: set, Condition: yes}, ItemOptions{IfMatch: created.ETag}); err != nil {
		t.Fatal(err)
	}
	// On a missing item the answer is NotFound, as for any patch.
	if _, err := c.PatchItem(key("p"), "nope", Patch{Ops: set, Condition: yes}, ItemOptions{}); !errors.Is(err, fault.NotFound) {
		t.Fatalf("missing item: %v", err)
	}
}

// In a transactional batch, a patch whose condition fails fails the batch: nothing applies.
func TestConditionalPatchInBatch(t *testing.T) {
	_, c := newContainer(t, Options{}, ContainerSpec{})
	mustCreate(t, c, item("a", "p", `,"n":1`))
	set := []document.PatchOp{{Op: "set", Path: "/n", Value: []byte("2")}}
	ops := []BatchOp{
		{Kind: OpCreate, Item: document.FromJSON(item("b", "p", ""))},
		{Kind: OpPatch, ID: "a", Patch: Patch{Ops: set, Condition: mustCondition(t, "FROM c WHERE c.n = 7")}},
	}
	results, failed, err := c.ExecuteBatch(context.Background(), key("p"), ops)
	if err != nil || failed != 1 || !errors.Is(results[1].Err, fault.PreconditionFailed) || !errors.Is(results[0].Err, fault.Aborted) {
		t.Fatalf("failing condition: %v %d %+v", err, failed, results)
	}
	if _, err := c.ReadItem(key("p"), "b"); !errors.Is(err, fault.NotFound) {
		t.Fatalf("the aborted create applied: %v", err)
	}
	ops[1].Patch.Condition = mustCondition(t, "FROM c WHERE c.n = 1")
	if _, failed, err := c.ExecuteBatch(context.Background(), key("p"), ops); err != nil || failed != -1 {
		t.Fatalf("holding condition: %v %d", err, failed)
	}
	if r, err := c.ReadItem(key("p"), "a"); err != nil || !strings.Contains(string(r.Doc), `"n":2`) {
		t.Fatalf("after the batch: %s %v", r.Doc, err)
	}
}
