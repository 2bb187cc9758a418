package partitiontest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/uniquekey"
)

// Items parses item operations as scenarios write them and prints their outcomes (see
// "Operations" in the package's documentation), the same way for every harness that drives
// partitions: it keeps the etags saved by as=NAME, for if-match=$NAME, and the partition keys
// by EPK, to print EPKs by name. It does not route: the caller sends each Op to the partition
// that owns its key, or to the one its on=N names. It is not safe for concurrent use; the
// operations it made may be executed concurrently, and printed once they return.
type Items struct {
	// Unique is the container's unique key policy: the writes ParseOp makes carry their
	// entries under it, as the engine's do. nil for none.
	Unique *uniquekey.Policy

	etags map[string]string  // by as=NAME
	pks   map[epk.EPK]string // partition keys by EPK
}

// NewItems returns an Items for a container with the unique key policy unique (nil for none).
func NewItems(unique *uniquekey.Policy) *Items {
	return &Items{Unique: unique, etags: map[string]string{}, pks: map[epk.EPK]string{}}
}

// Op is one item operation as a scenario wrote it.
type Op struct {
	Kind   string // create, replace, upsert, delete, read or mutate
	PK, ID string
	Op     partition.Operation
	// As names the etag of the outcome, saved by Outcome for a later if-match=$As; "" for
	// none.
	As string
	// On is the partition on=N names, to send the operation to instead of the one that owns
	// its key; 0 when not given.
	On uint32
	// Probe asks a mutate to record, in Probed, the committed LSN of the partition whose writer
	// decides it: Committed, which the caller sets once it has chosen the partition (nil
	// records 0). Outcome prints it.
	Probe     bool
	Committed func() uint64
	Probed    uint64
}

var opKinds = map[string]partition.OpKind{
	"create": partition.Create, "replace": partition.Replace, "upsert": partition.Upsert,
	"delete": partition.Delete, "read": partition.Read, "mutate": partition.Mutate,
}

// ParseOp parses an operation of kind (create, replace, upsert, delete, read or mutate) with
// its arguments, as "kind pk=P id=I [if-match=ETAG] [as=NAME] [probe] [pad=N] [incr=F]
// [change-id=X] [change-pk=Y] [on=N] [field=value...]". A mistake fails the test.
func (it *Items) ParseOp(t testing.TB, kind string, args []datadriven.CmdArg) *Op {
	t.Helper()
	k, ok := opKinds[kind]
	if !ok {
		t.Fatalf("unknown operation %q", kind)
	}
	op := &Op{Kind: kind}
	type field struct{ k, v string }
	var fields []field
	var incr, changeID, changePK string
	pad := 0
	for _, a := range args {
		v := ""
		if len(a.Vals) > 0 {
			v = a.Vals[0]
		}
		switch a.Key {
		case "pk":
			op.PK = v
		case "on":
			n, err := strconv.ParseUint(v, 10, 32)
			if err != nil || n == 0 {
				t.Fatalf("no partition %s", v)
			}
			op.On = uint32(n)
		case "id":
			op.ID = v
		case "as":
			op.As = v
		case "probe":
			op.Probe = true
		case "if-match":
			switch {
			case strings.HasPrefix(v, "$"):
				etag, ok := it.etags[v[1:]]
				if !ok {
					t.Fatalf("no etag saved as %s", v[1:])
				}
				op.Op.IfMatch = etag
			default:
				op.Op.IfMatch = v
			}
		case "pad":
			pad, _ = strconv.Atoi(v)
		case "incr":
			incr = v
		case "change-id":
			changeID = v
		case "change-pk":
			changePK = v
		default:
			fields = append(fields, field{a.Key, v})
		}
	}
	if op.PK == "" || op.ID == "" {
		t.Fatalf("%s needs pk= and id=", kind)
	}
	e := it.EPK(op.PK)
	op.Op.Kind, op.Op.EPK, op.Op.ID = k, e, op.ID
	jsonOf := func(v string) string {
		if json.Valid([]byte(v)) {
			return v
		}
		return strconv.Quote(v)
	}
	switch k {
	case partition.Create, partition.Replace, partition.Upsert:
		var b strings.Builder
		fmt.Fprintf(&b, `{"id":%q,"pk":%q`, op.ID, op.PK)
		for _, f := range fields {
			fmt.Fprintf(&b, `,%q:%s`, f.k, jsonOf(f.v))
		}
		if pad > 0 {
			fmt.Fprintf(&b, `,"pad":%q`, strings.Repeat("x", pad))
		}
		b.WriteString("}")
		item, key, err := document.Parse([]byte(b.String()), [][]string{{"pk"}})
		if err != nil {
			t.Fatalf("item %s: %v", b.String(), err)
		}
		if ke := epk.SchemeV2.Hash(key); ke != e {
			t.Fatalf("item's EPK %s is not the pk's %s", ke.Hex(), e.Hex())
		}
		op.Op.Item, op.Op.Terms = item, partition.TermsOf(item.Value, nil, nil) // as the engine does
		op.Op.Unique = it.Unique.Entries(item.Value)
	case partition.Mutate:
		op.Op.Mutate = func(cur []byte) (*document.Item, epk.EPK, [][]byte, error) {
			if op.Probe && op.Committed != nil {
				op.Probed = op.Committed()
			}
			d := json.NewDecoder(bytes.NewReader(cur))
			d.UseNumber()
			var m map[string]any
			if err := d.Decode(&m); err != nil {
				return nil, "", nil, err
			}
			for name := range m {
				if document.IsSystemProperty(name) {
					delete(m, name)
				}
			}
			for _, f := range fields {
				var v any
				if err := json.Unmarshal([]byte(jsonOf(f.v)), &v); err != nil {
					return nil, "", nil, err
				}
				m[f.k] = v
			}
			if incr != "" {
				n, _ := m[incr].(json.Number)
				f, _ := n.Float64()
				m[incr] = f + 1
			}
			if changeID != "" {
				m["id"] = changeID
			}
			if changePK != "" {
				m["pk"] = changePK
			}
			body, err := json.Marshal(m)
			if err != nil {
				return nil, "", nil, err
			}
			item, key, err := document.Parse(body, [][]string{{"pk"}})
			if err != nil {
				return nil, "", nil, err
			}
			return item, epk.SchemeV2.Hash(key), partition.TermsOf(item.Value, nil, nil), nil
		}
		if changePK != "" {
			it.EPK(changePK)
		}
	}
	return op
}

// ParseBatch parses the operations of a batch's input, one a line.
func (it *Items) ParseBatch(t testing.TB, input string) []*Op {
	t.Helper()
	var ops []*Op
	for _, line := range strings.Split(strings.TrimSpace(input), "\n") {
		cmd, args, err := datadriven.ParseLine(line)
		if err != nil {
			t.Fatal(err)
		}
		ops = append(ops, it.ParseOp(t, cmd, args))
	}
	if len(ops) == 0 {
		t.Fatal("batch without operations")
	}
	return ops
}

// OpArgs finds the operation in a command's arguments (race n=N create pk=...): its kind is
// the first argument without a value that names an operation, or batch, and the arguments
// after it are the operation's.
func OpArgs(t testing.TB, args []datadriven.CmdArg) (kind string, rest []datadriven.CmdArg) {
	t.Helper()
	for i, a := range args {
		if len(a.Vals) == 0 {
			if _, ok := opKinds[a.Key]; ok || a.Key == "batch" {
				return a.Key, args[i+1:]
			}
		}
	}
	t.Fatal("no operation given")
	return "", nil
}

// Operations are the partition operations of ops, in order, for one Execute.
func Operations(ops []*Op) []partition.Operation {
	out := make([]partition.Operation, len(ops))
	for i, op := range ops {
		out[i] = op.Op
	}
	return out
}

// KindOf prints an error as its fault kind.
func KindOf(err error) string {
	return fault.KindOf(err).String()
}

// Outcome describes a successful operation, and saves its etag when it was asked to (as=).
func (it *Items) Outcome(op *Op, r partition.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "lsn=%d", r.Doc.LSN)
	switch op.Op.Kind {
	case partition.Delete:
		b.WriteString(" deleted")
	case partition.Read, partition.Mutate:
		b.WriteString(" " + it.Body(r.Doc.JSON))
	}
	if r.Created {
		b.WriteString(" created")
	}
	if op.Op.Kind != partition.Delete {
		b.WriteString(ETagCheck(r.Doc))
		if op.As != "" {
			it.etags[op.As] = r.Doc.ETag()
		}
	}
	if op.Probe {
		fmt.Fprintf(&b, " (decided while lsn %d was the last committed)", op.Probed)
	}
	return b.String()
}

// BatchOutcome describes what one Execute of ops did: each operation's outcome, a line each,
// or which one failed.
func (it *Items) BatchOutcome(ops []*Op, res []partition.Result, err error) string {
	if err != nil {
		var be *partition.BatchError
		if !errors.As(err, &be) {
			return "not a BatchError: " + err.Error()
		}
		if fault.KindOf(err) != fault.KindOf(be.Err) {
			return "the BatchError's kind is not its operation's: " + err.Error()
		}
		return fmt.Sprintf("op %d (%s) failed: %s; nothing applied", be.Index, ops[be.Index].Kind, KindOf(be.Err))
	}
	var b strings.Builder
	for i, op := range ops {
		fmt.Fprintf(&b, "%d %s %s/%s: %s\n", i, op.Kind, op.PK, op.ID, it.Outcome(op, res[i]))
	}
	return b.String()
}

// Doc describes a version a point read returned.
func (it *Items) Doc(d partition.Doc) string {
	return fmt.Sprintf("lsn=%d %s%s", d.LSN, it.Body(d.JSON), ETagCheck(d))
}

// ETagCheck is empty when the version's etag, as reported and as stamped in its JSON, is the
// etag of its LSN; otherwise it says what is wrong, after a space.
func ETagCheck(d partition.Doc) string {
	var sys struct {
		ETag string `json:"_etag"`
	}
	if err := json.Unmarshal(d.JSON, &sys); err != nil {
		return " BAD JSON"
	}
	if d.ETag() != partition.ETag(d.LSN) || sys.ETag != `"`+partition.ETag(d.LSN)+`"` {
		return fmt.Sprintf(" BAD ETAG %s for lsn %d", sys.ETag, d.LSN)
	}
	return ""
}

// Body is an item's JSON without id, pk, pad and system properties, keys sorted.
func (it *Items) Body(j []byte) string {
	d := json.NewDecoder(bytes.NewReader(j))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return "BAD JSON " + string(j)
	}
	for k := range m {
		if k == "id" || k == "pk" || k == "pad" || document.IsSystemProperty(k) {
			delete(m, k)
		}
	}
	out, _ := json.Marshal(m)
	return string(out)
}

// EPK is the EPK of the partition key pk (a string), which PKName then prints as pk.
func (it *Items) EPK(pk string) epk.EPK {
	e := epk.SchemeV2.Hash(epk.Key{epk.String(pk)})
	it.pks[e] = pk
	return e
}

// PKName is the partition key whose EPK is e, when EPK or ParseOp has seen it, or else e in
// hex.
func (it *Items) PKName(e epk.EPK) string {
	if pk, ok := it.pks[e]; ok {
		return pk
	}
	return e.Hex()
}

// ItemName names an item as pk/id.
func (it *Items) ItemName(e epk.EPK, id string) string { return it.PKName(e) + "/" + id }
