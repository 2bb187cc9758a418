package partition

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/partita-db/partita/internal/epk"
)

// randomEntry makes an entry of every field, of kind k, from r.
func randomEntry(r *rand.Rand, k entryKind) *entry {
	str := func() string {
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		return string(b)
	}
	blob := func(n int) []byte {
		if r.IntN(4) == 0 {
			return nil
		}
		b := make([]byte, 1+r.IntN(n))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		return b
	}
	list := func() [][]byte {
		var l [][]byte
		for range r.IntN(4) {
			l = append(l, blob(30))
		}
		return l
	}
	u := func() uint64 { return r.Uint64() >> r.IntN(64) }
	i64 := func() int64 { return int64(u()) - int64(u()) }
	e := &entry{kind: k, epoch: u(), proposal: u()}
	switch k {
	case entryWrite:
		c := &Command{LSN: u(), TS: i64(), Images: r.IntN(2) == 0}
		c.After.LSN, c.After.counts, c.After.Seq = u(), counts{Items: i64(), Bytes: i64()}, u()
		for range r.IntN(5) {
			ch := Change{EPK: str(), ID: str(), Renamed: str(), Seq: u(), New: r.IntN(2) == 0, Delete: r.IntN(2) == 0,
				Expired: r.IntN(2) == 0, Value: blob(100), Logical: counts{Items: i64(), Bytes: i64()},
				Prev: logPos{lsn: u(), i: uint16(r.IntN(1 << 16))}, IndexDel: list(), IndexAdd: list(),
				UniqueDel: list(), UniqueAdd: list()}
			if c.Images && ch.Prev.lsn != 0 {
				ch.PrevJSON = blob(100)
			}
			c.Changes = append(c.Changes, ch)
		}
		e.cmd = c
	case entryLease:
		e.lease = u()
	case entryPolicy:
		e.policy = &policyChange{Policy: blob(60)}
	case entryReindex:
		s := &reindexStep{Cursor: u(), Done: i64(), End: r.IntN(2) == 0}
		for range r.IntN(4) {
			s.Items = append(s.Items, reindexed{EPK: str(), Seq: u(), Del: list(), Add: list()})
		}
		e.reindex = s
	case entryPurge:
		s := &purgeStep{Through: u()}
		for range r.IntN(4) {
			s.Refs = append(s.Refs, logRef{EPK: str(), logPos: logPos{lsn: u(), i: uint16(r.IntN(1 << 16))}})
		}
		e.purge = s
	case entrySplitStart:
		e.split = &splitPlan{At: epk.EPK(str()), Left: r.Uint32(), Right: r.Uint32()}
	case entryVectorBuild:
		s := &vectorBuildStep{Path: str(), Started: r.IntN(2) == 0, From: u(), Cursor: u(), Done: i64(), End: r.IntN(2) == 0}
		for range r.IntN(4) {
			x := builtVector{Seq: u()}
			for range r.IntN(5) {
				x.Vec = append(x.Vec, r.Float32()-0.5)
			}
			s.Items = append(s.Items, x)
		}
		e.build = s
	}
	return e
}

// sameEntry compares two entries as what they apply: nil and empty byte slices are alike, and
// the fields that are not encoded (sync; a change's terms) are left out.
func sameEntry(a, b *entry) bool {
	norm := func(e *entry) string {
		return fmt.Sprintf("%s %d %d %d %s", e.kind, e.epoch, e.proposal, e.lease, deref(e))
	}
	return norm(a) == norm(b)
}

// deref prints what an entry points to, with nil and empty slices alike.
func deref(e *entry) string {
	var b bytes.Buffer
	printValue(&b, reflect.ValueOf(e.cmd))
	printValue(&b, reflect.ValueOf(e.policy))
	printValue(&b, reflect.ValueOf(e.reindex))
	printValue(&b, reflect.ValueOf(e.purge))
	printValue(&b, reflect.ValueOf(e.split))
	printValue(&b, reflect.ValueOf(e.build))
	return b.String()
}

func printValue(b *bytes.Buffer, v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			b.WriteString("nil")
			return
		}
		printValue(b, v.Elem())
	case reflect.Struct:
		b.WriteString("{")
		for i := range v.NumField() {
			if name := v.Type().Field(i).Name; name == "terms" || name == "uniq" {
				continue
			}
			printValue(b, v.Field(i))
			b.WriteString(",")
		}
		b.WriteString("}")
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			fmt.Fprintf(b, "%x", v.Bytes())
			return
		}
		b.WriteString("[")
		for i := range v.Len() {
			printValue(b, v.Index(i))
			b.WriteString(",")
		}
		b.WriteString("]")
	case reflect.String:
		fmt.Fprintf(b, "%q", v.String())
	case reflect.Bool:
		fmt.Fprintf(b, "%v", v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		fmt.Fprintf(b, "%d", v.Int())
	case reflect.Float32:
		fmt.Fprintf(b, "%x", math.Float32bits(float32(v.Float())))
	default:
		fmt.Fprintf(b, "%d", v.Uint())
	}
}

// Every kind of entry, with every field set at random, decodes to what was encoded.
func TestCodecRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for n := range 5000 {
		k := entryKind(1 + n%int(entryKinds-1))
		e := randomEntry(r, k)
		b := encodeEntry(nil, e)
		got, err := decodeEntryBytes(b)
		if err != nil {
			t.Fatalf("%s entry %d: %v\n%x", k, n, err, b)
		}
		if !sameEntry(e, got) {
			t.Fatalf("%s entry %d decodes differently:\n%s\n%s", k, n, deref(e), deref(got))
		}
		// Every prefix and every flipped last byte is refused, or decodes to another entry.
		for cut := range len(b) {
			if _, err := decodeEntryBytes(b[:cut]); err == nil {
				t.Fatalf("%s entry %d: a prefix of %d bytes of %d decoded", k, n, cut, len(b))
			}
		}
	}
}

// An entry of a version this build does not know is refused, never misread.
func TestCodecRefusesOtherVersions(t *testing.T) {
	b := encodeEntry(nil, &entry{kind: entryLease, lease: 3})
	b[0] = codecVersion + 1
	if _, err := decodeEntryBytes(b); err == nil {
		t.Fatal("an entry of version 2 decoded")
	}
}

// Whatever bytes arrive, decoding returns an entry or an error, never panics, and what it
// returns encodes to bytes that decode to the same entry.
func FuzzDecodeEntry(f *testing.F) {
	r := rand.New(rand.NewPCG(1, 2))
	for k := entryWrite; k < entryKinds; k++ {
		f.Add(encodeEntry(nil, randomEntry(r, k)))
	}
	f.Add([]byte{})
	f.Add([]byte{codecVersion, byte(entryWrite), 0, 0, 1, 0, 0, 1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := decodeEntryBytes(b)
		if err != nil {
			return
		}
		again, err := decodeEntryBytes(encodeEntry(nil, e))
		if err != nil {
			t.Fatalf("a decoded entry does not decode again: %v", err)
		}
		if !sameEntry(e, again) {
			t.Fatalf("decodes differently once encoded again:\n%s\n%s", deref(e), deref(again))
		}
	})
}
