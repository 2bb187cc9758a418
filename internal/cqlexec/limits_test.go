package cqlexec

import (
	"fmt"
	"strings"
	"testing"

	"github.com/partita-db/partita/internal/cqlvalue"
	"github.com/partita-db/partita/internal/engine"
)

// inList is "(0, 1, ..., n-1)".
func inList(n int) string {
	vs := make([]string, n)
	for i := range vs {
		vs[i] = fmt.Sprint(i)
	}
	return "(" + strings.Join(vs, ", ") + ")"
}

// TestInProductIsBounded checks that IN restrictions may not pin more than maxInProduct
// partitions or clustering prefixes, in reads and writes, and that 100 are fine.
func TestInProductIsBounded(t *testing.T) {
	h := newHarness(t, engine.Options{})
	for _, st := range []string{
		"CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"USE ks",
		"CREATE TABLE t (a int, b int, c int, d int, v int, PRIMARY KEY ((a, b), c, d))",
	} {
		if out := h.exec(st, 0); strings.Contains(out, "invalid") {
			t.Fatal(out)
		}
	}
	ten, eleven := inList(10), inList(11)
	for _, c := range []struct{ st, want string }{
		{"SELECT * FROM t WHERE a IN " + ten + " AND b IN " + ten, "(0 rows)"},
		{"SELECT * FROM t WHERE a IN " + ten + " AND b IN " + eleven, "invalid: Aborting query because the cartesian product of the IN restrictions on partition key produces 110 values, this exceeds fail threshold of 100."},
		{"SELECT * FROM t WHERE a = 1 AND b = 1 AND c IN " + eleven + " AND d IN " + ten, "invalid: Aborting query because the cartesian product of the IN restrictions on clustering key produces 110 values, this exceeds fail threshold of 100."},
		{"SELECT * FROM t WHERE a IN " + inList(100000) + " AND b = 1", "produces 100000 values"},
		{"UPDATE t SET v = 1 WHERE a IN " + eleven + " AND b IN " + ten + " AND c = 1 AND d = 1", "on partition key produces 110 values"},
		{"DELETE FROM t WHERE a = 1 AND b = 1 AND c IN " + eleven + " AND d IN " + ten, "on clustering key produces 110 values"},
		{"UPDATE t SET v = 1 WHERE a IN " + ten + " AND b IN " + ten + " AND c = 1 AND d IN " + ten, "ok"},
		{"SELECT count(*) FROM t", "\n1000\n"},
	} {
		if out := h.exec(c.st, 0); !strings.Contains(out, c.want) {
			t.Errorf("%.80s...: got %q, want %q", c.st, out, c.want)
		}
	}
	// A bound IN list counts its distinct values.
	p, err := h.x.Prepare(h.sess, "SELECT * FROM t WHERE a = 1 AND b IN ?")
	if err != nil {
		t.Fatal(err)
	}
	var many, dup [][]byte
	for i := range 101 {
		many = append(many, cqlvalue.EncodeInt(int32(i)))
		dup = append(dup, cqlvalue.EncodeInt(7))
	}
	if _, err := h.x.Execute(h.sess, p, Options{Values: []cqlvalue.Value{{Bytes: cqlvalue.EncodeList(many...)}}}); err == nil || !strings.Contains(err.Error(), "produces 101 values") {
		t.Errorf("101 bound values: %v", err)
	}
	if _, err := h.x.Execute(h.sess, p, Options{Values: []cqlvalue.Value{{Bytes: cqlvalue.EncodeList(dup...)}}}); err != nil {
		t.Errorf("101 equal bound values: %v", err)
	}
}

// TestRangeDeleteIsBounded checks that a DELETE of a range whose rows' tombstones would pass
// maxRangeDeleteBytes is refused and changes nothing, and that a narrower one applies.
func TestRangeDeleteIsBounded(t *testing.T) {
	defer func(n int) { maxRangeDeleteBytes = n }(maxRangeDeleteBytes)
	maxRangeDeleteBytes = 64 << 10
	h := newHarness(t, engine.Options{})
	for _, st := range []string{
		"CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"USE ks",
		"CREATE TABLE t (k int, c int, v text, PRIMARY KEY (k, c))",
	} {
		h.exec(st, 0)
	}
	ins, err := h.x.Prepare(h.sess, "INSERT INTO t (k, c, v) VALUES (1, ?, 'some value')")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 1000 { // about 130 bytes each
		if _, err := h.x.Execute(h.sess, ins, Options{Values: []cqlvalue.Value{{Bytes: cqlvalue.EncodeInt(int32(i))}}}); err != nil {
			t.Fatal(err)
		}
	}
	count := func() string { return h.exec("SELECT count(*) FROM t WHERE k = 1", 0) }
	for _, st := range []string{"DELETE FROM t WHERE k = 1", "DELETE FROM t WHERE k = 1 AND c >= 100", "BEGIN BATCH DELETE FROM t WHERE k = 1 AND c < 400; DELETE FROM t WHERE k = 1 AND c >= 400; APPLY BATCH"} {
		if out := h.exec(st, 0); !strings.Contains(out, "too large: The DELETE covers more rows than one statement may delete") {
			t.Errorf("%s: %s", st, out)
		}
	}
	if got := count(); !strings.Contains(got, "\n1000\n") {
		t.Errorf("the refused deletes changed the partition: %s", got)
	}
	if out := h.exec("DELETE FROM t WHERE k = 1 AND c < 300", 0); out != "ok\n" {
		t.Errorf("narrower range: %s", out)
	}
	if got := count(); !strings.Contains(got, "\n700\n") {
		t.Errorf("after the delete: %s", got)
	}
}
