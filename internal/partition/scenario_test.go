package partition

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/rid"
	"github.com/partita-db/partita/internal/storage"
	"github.com/partita-db/partita/internal/uniquekey"
	"github.com/partita-db/partita/internal/value"
)

// TestScenarios runs the stories under testdata/scenarios against partitions opened directly
// on storage, without the engine. Commands:
//
//	open [max-logical-bytes=N] [unique=(KEY,...)] [fs=memory]
//	    a fresh store with one partition (id 1) owning the whole EPK space; unique gives the
//	    container unique keys, each written as its paths joined by + (/email or /first+/last);
//	    fs=memory keeps it in memory, where the power can be cut (see scenario_crash_test.go)
//	create|replace|upsert|delete|read|mutate pk=P id=I [option...] [name=value...]
//	    one operation, Executed on the partition that owns P; see "Operations" below
//	batch
//	    the operations of the input, one a line, as one Execute
//	get pk=P id=I
//	    a point read (Partition.Read), outside the writer
//	race n=N <operation>
//	    N goroutines Execute the same operation at once; prints how many ended each way
//	hold name=H
//	    sends the writer a control request (Partition.control) that blocks it until released:
//	    it runs at once when no other hold is pending, otherwise it queues behind what is
//	    queued; once it runs, every earlier group is committed and no later one has started
//	queue name=Q <operation> | queue name=Q batch (operations in the input)
//	queue name=Q bulk=N [requests=K] pk=P prefix=X
//	    Executes in the background while the writer is held; returns once the request is in
//	    the writer's queue, behind everything queued before it. bulk is K commands (one by
//	    default) of N creates each, of ids X<k>-<i> in P.
//	release name=H
//	    lets the running hold return, waits for the queued requests up to the next hold (or
//	    all of them) and prints their outcomes in queue order
//	stats
//	    every open partition's Stats and its logical partitions, each checked against a
//	    recount of the stored items
//	index path=/p
//	    every open partition's index entries at the top-level path p, in value order
//	    (IndexOrdered), checked against the items' current values and against IndexScan; and
//	    no entry of its index, at any path, may name an item outside its range
//	index-entries id=N [path=/p]
//	    the raw index entries in storage under partition id N, open or not
//	state-record id=N
//	    the persisted state record of partition id N
//	epks pks=(a,b,...)
//	    the partition keys in EPK order, with their EPKs
//	split-start (at=HEX | at-pk=P) left=L right=R
//	split-backfill | split-commit | split-abort
//	    drive a Split of the partition that owns the split point; split-commit opens the
//	    children as the engine does (Open with the child's id and range, start LSN 0)
//	restart [max-logical-bytes=N]
//	    closes the open partitions and the store and opens them again (with a new cap)
//	cut-power sync=K [keep=P seed=S] | crash [keep=P seed=S]
//	    power loss, on a store opened with fs=memory: see scenario_crash_test.go
//	log
//	    every open partition's change log, all versions, as ReadLog passes it
//	unique-entries
//	    every unique key entry of the container in storage, as pk: key#(values) -> id, checked
//	    against the entries the open partitions' items should have
//
// Operations are written "kind pk=P id=I [if-match=ETAG] [as=NAME] [probe] [pad=N]
// [incr=F] [change-id=X] [change-pk=Y] [on=N] [field=value...]"; on=N sends it to partition N
// (open or closed by a split) instead of the one that owns P. The item's body is id, pk, the
// fields in order (a value that is JSON stays JSON, anything else becomes a string) and pad,
// a string of N x's. ETAG is *, $NAME (the etag saved by an earlier as=NAME) or a literal.
// Mutate sets the fields on the current item, adds 1 to field F (incr), or changes the id or
// partition key; with probe it also records the partition's committed LSN while the writer
// decides it.
//
// Items print as pk/id {fields}, without id, pk, pad and the system properties. Outcomes print
// as the command's LSN, or the fault kind of the error.
func TestScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata/scenarios", func(t *testing.T, path string) {
		s := &scenario{t: t, etags: map[string]string{}, pks: map[epk.EPK]string{}}
		defer s.cleanup()
		datadriven.RunTest(t, path, s.run)
	})
}

const (
	scenarioContainer = 7
	scenarioParent    = 1
)

var scenarioRID = rid.ForContainer(rid.ForDatabase(3), scenarioContainer)

type scenario struct {
	t   *testing.T
	dir string
	mem *storage.MemFS // the store's file system when opened with fs=memory; nil on disk
	// cut is what survived the power cut cut-power armed, once its sync came; the next crash
	// reopens on it.
	cut        *powerCut
	db         *storage.DB
	maxLogical int64
	parts      []*Partition // open, in range order
	parents    []*Partition // closed by a split
	etags      map[string]string
	pks        map[epk.EPK]string

	split  *Split
	unique *uniquekey.Policy // the container's unique keys; nil for none
	// running is the hold the writer is blocked in; pending is what is queued behind it.
	running *hold
	pending []*queued
}

type hold struct {
	name                   string
	p                      *Partition
	entered, release, done chan struct{}
	releasedOnce           sync.Once
	err                    error
}

type queued struct {
	name    string
	hold    *hold // set for a queued hold
	specs   []*opSpec
	bulk    bool // many creates, printed as one line
	results []Result
	err     error
	done    chan struct{}
}

func (s *scenario) cleanup() {
	for _, q := range s.pending {
		if q.hold != nil {
			q.hold.releasedOnce.Do(func() { close(q.hold.release) })
		}
	}
	if s.running != nil {
		s.running.releasedOnce.Do(func() { close(s.running.release) })
	}
	for _, q := range s.pending {
		<-q.done
	}
	if s.split != nil {
		if err := s.split.Abort(); err != nil {
			s.t.Errorf("abort at cleanup: %v", err)
		}
	}
	for _, p := range s.parts {
		p.Close()
	}
	if s.db != nil {
		if err := s.db.Close(); err != nil {
			s.t.Errorf("closing storage: %v", err)
		}
	}
}

func (s *scenario) config(id uint32, r epk.Range) Config {
	return Config{
		DB: s.db, Container: scenarioContainer, ID: id, Range: r, ContainerRID: scenarioRID,
		SelfPrefix:      "dbs/" + rid.ForDatabase(3).String() + "/colls/" + scenarioRID.String() + "/docs/",
		MaxLogicalBytes: s.maxLogical, Unique: s.unique,
	}
}

func (s *scenario) run(t *testing.T, td *datadriven.TestData) string {
	s.t = t
	switch td.Cmd {
	case "open":
		s.maxLogical = 1 << 30
		td.MaybeScanArgs(t, "max-logical-bytes", &s.maxLogical)
		s.unique = scenarioUnique(t, td)
		s.dir = t.TempDir()
		if td.HasArg("fs") {
			var fs string
			td.ScanArgs(t, "fs", &fs)
			if fs != "memory" {
				t.Fatalf("fs=%s: only fs=memory is known", fs)
			}
			s.dir, s.mem = "/store", storage.NewMemFS()
		}
		db, err := storage.Open(s.dir, storage.Options{FS: s.mem})
		if err != nil {
			t.Fatal(err)
		}
		s.db = db
		p, err := Open(s.config(scenarioParent, epk.All))
		if err != nil {
			t.Fatal(err)
		}
		s.parts = []*Partition{p}
		return s.describe(p)
	case "create", "replace", "upsert", "delete", "read", "mutate":
		s.mustNotBeHeld()
		spec := s.parseOp(td.Cmd, td.CmdArgs)
		res, err := spec.p.Execute(spec.op)
		if err != nil {
			var be *BatchError
			if errors.As(err, &be) {
				return "unexpected BatchError from a single operation: " + err.Error()
			}
			return kindOf(err)
		}
		return s.outcome(spec, res[0])
	case "batch":
		s.mustNotBeHeld()
		specs := s.parseBatch(td.Input)
		res, err := specs[0].p.Execute(opsOf(specs)...)
		return s.batchOutcome(specs, res, err)
	case "get":
		var pk, id string
		td.ScanArgs(t, "pk", &pk)
		td.ScanArgs(t, "id", &id)
		e := s.epkOf(pk)
		d, err := s.route(e).Read(e, id, nil)
		if err != nil {
			return kindOf(err)
		}
		return fmt.Sprintf("lsn=%d %s%s", d.LSN, s.body(d.JSON), s.etagCheck(d))
	case "race":
		return s.race(td)
	case "hold":
		return s.hold(td)
	case "queue":
		return s.queue(td)
	case "release":
		return s.release(td)
	case "stats":
		return s.stats()
	case "index":
		var path string
		td.ScanArgs(t, "path", &path)
		return s.index(path)
	case "index-entries":
		var id uint32
		var path string
		td.ScanArgs(t, "id", &id)
		td.MaybeScanArgs(t, "path", &path)
		return s.indexEntries(id, path)
	case "state-record":
		var id uint32
		td.ScanArgs(t, "id", &id)
		v, err := s.db.GetCopy(nil, storage.PartitionKey(scenarioContainer, id))
		if storage.IsNotFound(err) {
			return "none"
		}
		if err != nil {
			t.Fatal(err)
		}
		st, err := decodeState(v)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("lsn=%d items=%d bytes=%d", st.LSN, st.Items, st.Bytes)
	case "epks":
		arg, _ := td.Arg("pks")
		type kv struct {
			pk string
			e  epk.EPK
		}
		var kvs []kv
		for _, pk := range arg.Vals {
			kvs = append(kvs, kv{pk, s.epkOf(pk)})
		}
		sort.Slice(kvs, func(i, j int) bool { return kvs[i].e < kvs[j].e })
		var b strings.Builder
		for _, x := range kvs {
			fmt.Fprintf(&b, "%s %s\n", x.pk, x.e.Hex())
		}
		return b.String()
	case "unique-entries":
		return s.uniqueEntries()
	case "split-start", "split-backfill", "split-commit", "split-abort":
		s.mustNotBeHeld()
		return s.splitCmd(td)
	case "cut-power":
		return s.cutPower(td)
	case "crash":
		s.mustNotBeHeld()
		return s.crash(td)
	case "log":
		return s.log()
	case "restart":
		s.mustNotBeHeld()
		td.MaybeScanArgs(t, "max-logical-bytes", &s.maxLogical)
		var cfgs []Config
		for _, p := range s.parts {
			cfgs = append(cfgs, s.config(p.id, p.rng))
			p.Close()
		}
		if err := s.db.Close(); err != nil {
			t.Fatal(err)
		}
		db, err := storage.Open(s.dir, storage.Options{FS: s.mem})
		if err != nil {
			t.Fatal(err)
		}
		s.db, s.parts, s.parents = db, nil, nil
		var b strings.Builder
		for _, cfg := range cfgs {
			cfg.DB = db
			p, err := Open(cfg)
			if err != nil {
				t.Fatal(err)
			}
			s.parts = append(s.parts, p)
			s.abortInFlight(&b, p)
			b.WriteString(s.describe(p) + "\n")
		}
		return b.String()
	}
	t.Fatalf("unknown command %s", td.Cmd)
	return ""
}

// abortInFlight aborts the split a reopened partition had in flight, as the engine does when
// it opens a container, and says so.
func (s *scenario) abortInFlight(b *strings.Builder, p *Partition) {
	if at, _, _, ok := p.SplitInFlight(); ok {
		if err := p.AbortSplit(); err != nil {
			s.t.Fatal(err)
		}
		fmt.Fprintf(b, "p%d: the split at %s in flight was aborted\n", p.id, at.Hex())
	}
}

func (s *scenario) mustNotBeHeld() {
	if s.running != nil {
		s.t.Fatalf("the writer is held by %s: release it first", s.running.name)
	}
}

func (s *scenario) describe(p *Partition) string {
	st := p.Stats()
	return fmt.Sprintf("p%d %v lsn=%d items=%d bytes=%d", p.id, p.rng, st.LSN, st.Items, st.Bytes)
}

func (s *scenario) epkOf(pk string) epk.EPK {
	e := epk.SchemeV2.Hash(epk.Key{epk.String(pk)})
	s.pks[e] = pk
	return e
}

func (s *scenario) byID(id string) *Partition {
	for _, p := range append(append([]*Partition(nil), s.parts...), s.parents...) {
		if fmt.Sprint(p.id) == id {
			return p
		}
	}
	s.t.Fatalf("no partition %s", id)
	return nil
}

func (s *scenario) route(e epk.EPK) *Partition {
	for _, p := range s.parts {
		if p.rng.Contains(e) {
			return p
		}
	}
	s.t.Fatalf("no open partition owns %s", e.Hex())
	return nil
}

// opSpec is one operation as a scenario wrote it.
type opSpec struct {
	kind    string
	pk, id  string
	as      string
	p       *Partition
	op      Operation
	probe   bool
	probed  uint64 // the committed LSN when the writer ran the probe
	changed bool   // change-id or change-pk
}

var opKinds = map[string]OpKind{
	"create": Create, "replace": Replace, "upsert": Upsert, "delete": Delete, "read": Read, "mutate": Mutate,
}

func (s *scenario) parseOp(kind string, args []datadriven.CmdArg) *opSpec {
	t := s.t
	k, ok := opKinds[kind]
	if !ok {
		t.Fatalf("unknown operation %q", kind)
	}
	spec := &opSpec{kind: kind}
	type field struct{ k, v string }
	var fields []field
	var incr, changeID, changePK, on string
	pad := 0
	for _, a := range args {
		v := ""
		if len(a.Vals) > 0 {
			v = a.Vals[0]
		}
		switch a.Key {
		case "pk":
			spec.pk = v
		case "on":
			on = v
		case "id":
			spec.id = v
		case "as":
			spec.as = v
		case "probe":
			spec.probe = true
		case "if-match":
			switch {
			case strings.HasPrefix(v, "$"):
				etag, ok := s.etags[v[1:]]
				if !ok {
					t.Fatalf("no etag saved as %s", v[1:])
				}
				spec.op.IfMatch = etag
			default:
				spec.op.IfMatch = v
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
	if spec.pk == "" || spec.id == "" {
		t.Fatalf("%s needs pk= and id=", kind)
	}
	e := s.epkOf(spec.pk)
	spec.p = s.route(e)
	if on != "" {
		spec.p = s.byID(on)
	}
	spec.op.Kind, spec.op.EPK, spec.op.ID = k, e, spec.id
	jsonOf := func(v string) string {
		if json.Valid([]byte(v)) {
			return v
		}
		return strconv.Quote(v)
	}
	switch k {
	case Create, Replace, Upsert:
		var b strings.Builder
		fmt.Fprintf(&b, `{"id":%q,"pk":%q`, spec.id, spec.pk)
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
		spec.op.Item, spec.op.Terms = item, TermsOf(item.Value, nil) // as the engine does
		spec.op.Unique = s.unique.Entries(item.Value)
	case Mutate:
		spec.changed = changeID != "" || changePK != ""
		p := spec.p
		spec.op.Mutate = func(cur []byte) (*document.Item, epk.EPK, [][]byte, error) {
			if spec.probe {
				spec.probed = p.Stats().LSN
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
			return item, epk.SchemeV2.Hash(key), TermsOf(item.Value, nil), nil
		}
		if changePK != "" {
			s.epkOf(changePK)
		}
	}
	return spec
}

func (s *scenario) parseBatch(input string) []*opSpec {
	var specs []*opSpec
	for _, line := range strings.Split(strings.TrimSpace(input), "\n") {
		cmd, args, err := datadriven.ParseLine(line)
		if err != nil {
			s.t.Fatal(err)
		}
		specs = append(specs, s.parseOp(cmd, args))
	}
	if len(specs) == 0 {
		s.t.Fatal("batch without operations")
	}
	return specs
}

func opsOf(specs []*opSpec) []Operation {
	ops := make([]Operation, len(specs))
	for i, sp := range specs {
		ops[i] = sp.op
	}
	return ops
}

func kindOf(err error) string {
	return fault.KindOf(err).String()
}

// outcome describes a successful operation and saves its etag when asked to.
func (s *scenario) outcome(spec *opSpec, r Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "lsn=%d", r.Doc.LSN)
	switch spec.op.Kind {
	case Delete:
		b.WriteString(" deleted")
	case Read, Mutate:
		b.WriteString(" " + s.body(r.Doc.JSON))
	}
	if r.Created {
		b.WriteString(" created")
	}
	if spec.op.Kind != Delete {
		b.WriteString(s.etagCheck(r.Doc))
		if spec.as != "" {
			s.etags[spec.as] = r.Doc.ETag()
		}
	}
	if spec.probe {
		fmt.Fprintf(&b, " (decided while lsn %d was the last committed)", spec.probed)
	}
	return b.String()
}

func (s *scenario) batchOutcome(specs []*opSpec, res []Result, err error) string {
	if err != nil {
		var be *BatchError
		if !errors.As(err, &be) {
			return "not a BatchError: " + err.Error()
		}
		if fault.KindOf(err) != fault.KindOf(be.Err) {
			return "the BatchError's kind is not its operation's: " + err.Error()
		}
		return fmt.Sprintf("op %d (%s) failed: %s; nothing applied", be.Index, specs[be.Index].kind, kindOf(be.Err))
	}
	var b strings.Builder
	for i, sp := range specs {
		fmt.Fprintf(&b, "%d %s %s/%s: %s\n", i, sp.kind, sp.pk, sp.id, s.outcome(sp, res[i]))
	}
	return b.String()
}

// etagCheck is empty when the version's etag, as reported and as stamped in its JSON, is the
// etag of its LSN.
func (s *scenario) etagCheck(d Doc) string {
	var sys struct {
		ETag string `json:"_etag"`
	}
	if err := json.Unmarshal(d.JSON, &sys); err != nil {
		return " BAD JSON"
	}
	if d.ETag() != ETag(d.LSN) || sys.ETag != `"`+ETag(d.LSN)+`"` {
		return fmt.Sprintf(" BAD ETAG %s for lsn %d", sys.ETag, d.LSN)
	}
	return ""
}

// body is an item's JSON without id, pk, pad and system properties, keys sorted.
func (s *scenario) body(j []byte) string {
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

// race runs one operation from n goroutines at once.
func (s *scenario) race(td *datadriven.TestData) string {
	s.mustNotBeHeld()
	var n int
	td.ScanArgs(s.t, "n", &n)
	kind, args := opArgs(s.t, td.CmdArgs)
	spec := s.parseOp(kind, args)
	start := make(chan struct{})
	var mu sync.Mutex
	tally := map[string]int{}
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			res, err := spec.p.Execute(spec.op)
			out := "ok"
			switch {
			case err != nil:
				out = kindOf(err)
			case res[0].Created:
				out = "created"
			}
			mu.Lock()
			tally[out]++
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	var keys []string
	for k := range tally {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s: %d", k, tally[k]))
	}
	return strings.Join(parts, ", ")
}

// opArgs finds the operation in a command's arguments: its kind is the first argument
// without a value, and the arguments after it are the operation's.
func opArgs(t *testing.T, args []datadriven.CmdArg) (string, []datadriven.CmdArg) {
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

// waitFor polls cond for up to ten seconds.
func (s *scenario) waitFor(what string, cond func() bool) {
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(50 * time.Microsecond) {
		if time.Now().After(deadline) {
			s.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func (s *scenario) hold(td *datadriven.TestData) string {
	var name string
	td.ScanArgs(s.t, "name", &name)
	p := s.parts[0]
	if len(s.parts) > 1 {
		s.t.Fatal("hold needs a single open partition")
	}
	h := &hold{name: name, p: p, entered: make(chan struct{}), release: make(chan struct{}), done: make(chan struct{})}
	before := len(p.queue)
	go func() {
		h.err = p.control(func() {
			close(h.entered)
			<-h.release
		})
		close(h.done)
	}()
	if s.running == nil {
		// The writer is idle (nothing is queued while it is not held): it runs the hold.
		s.waitFor("the hold to run", func() bool {
			select {
			case <-h.entered:
				return true
			default:
				return false
			}
		})
		s.running = h
		return "the writer is held"
	}
	s.waitFor("the hold to be queued", func() bool { return len(p.queue) == before+1 })
	s.pending = append(s.pending, &queued{name: name, hold: h, done: h.done})
	return fmt.Sprintf("queued behind %d", before)
}

func (s *scenario) queue(td *datadriven.TestData) string {
	if s.running == nil {
		s.t.Fatal("queue needs a held writer (hold first)")
	}
	var name string
	td.ScanArgs(s.t, "name", &name)
	bulk, requests := 0, 1
	td.MaybeScanArgs(s.t, "bulk", &bulk)
	td.MaybeScanArgs(s.t, "requests", &requests)
	var out []string
	for r := range requests {
		var specs []*opSpec
		if bulk > 0 {
			var pk, prefix string
			td.ScanArgs(s.t, "pk", &pk)
			td.ScanArgs(s.t, "prefix", &prefix)
			for i := range bulk {
				specs = append(specs, s.parseOp("create", []datadriven.CmdArg{
					{Key: "pk", Vals: []string{pk}}, {Key: "id", Vals: []string{fmt.Sprintf("%s%d-%d", prefix, r, i)}},
					{Key: "n", Vals: []string{strconv.Itoa(i)}}}))
			}
		} else if kind, args := opArgs(s.t, td.CmdArgs); kind == "batch" {
			specs = s.parseBatch(td.Input)
		} else {
			specs = []*opSpec{s.parseOp(kind, args)}
		}
		p := specs[0].p
		if p != s.running.p {
			s.t.Fatal("queued to a partition whose writer is not held")
		}
		q := &queued{name: name, specs: specs, bulk: bulk > 0, done: make(chan struct{})}
		before := len(p.queue)
		go func() {
			q.results, q.err = p.Execute(opsOf(specs)...)
			close(q.done)
		}()
		s.waitFor("the request to be queued", func() bool { return len(p.queue) == before+1 })
		s.pending = append(s.pending, q)
		for _, e := range s.pending {
			select {
			case <-e.done:
				s.t.Fatalf("%s was answered while the writer is held", e.name)
			default:
			}
		}
		if r == 0 || r == requests-1 {
			out = append(out, fmt.Sprintf("queued behind %d", before))
		}
	}
	return strings.Join(out, " ... ")
}

func (s *scenario) release(td *datadriven.TestData) string {
	var name string
	td.ScanArgs(s.t, "name", &name)
	h := s.running
	if h == nil || h.name != name {
		s.t.Fatalf("%s is not the running hold", name)
	}
	h.releasedOnce.Do(func() { close(h.release) })
	<-h.done
	if h.err != nil {
		s.t.Fatal(h.err)
	}
	s.running = nil
	var b strings.Builder
	for len(s.pending) > 0 {
		q := s.pending[0]
		if q.hold != nil {
			<-q.hold.entered // the writer reached the next hold
			s.running, s.pending = q.hold, s.pending[1:]
			fmt.Fprintf(&b, "the writer is held by %s\n", q.name)
			break
		}
		<-q.done
		s.pending = s.pending[1:]
		if q.bulk {
			// Consecutive bulk requests of one name print as one line.
			n, created, first, last := 0, 0, uint64(math.MaxUint64), uint64(0)
			for {
				n++
				if q.err == nil {
					for _, r := range q.results {
						if r.Created {
							created++
						}
						first, last = min(first, r.Doc.LSN), max(last, r.Doc.LSN)
					}
				}
				if len(s.pending) == 0 || !s.pending[0].bulk || s.pending[0].name != q.name {
					break
				}
				q = s.pending[0]
				<-q.done
				s.pending = s.pending[1:]
			}
			fmt.Fprintf(&b, "%s: %d commands, %d items created at lsn=%d..%d\n", q.name, n, created, first, last)
			continue
		}
		if len(q.specs) > 1 {
			out := strings.TrimSuffix(s.batchOutcome(q.specs, q.results, q.err), "\n")
			fmt.Fprintf(&b, "%s:\n  %s\n", q.name, strings.ReplaceAll(out, "\n", "\n  "))
			continue
		}
		if q.err != nil {
			fmt.Fprintf(&b, "%s: %s\n", q.name, kindOf(q.err))
			continue
		}
		fmt.Fprintf(&b, "%s: %s\n", q.name, s.outcome(q.specs[0], q.results[0]))
	}
	return b.String()
}

// stats prints each open partition's Stats and logical partitions, checked against a
// recount of its items.
func (s *scenario) stats() string {
	var b strings.Builder
	for _, p := range s.parts {
		st := p.Stats()
		fmt.Fprintf(&b, "p%d lsn=%d items=%d bytes=%d", p.id, st.LSN, st.Items, st.Bytes)
		recount := map[epk.EPK]counts{}
		var total counts
		var last uint64
		inOrder := true
		err := p.Scan([]epk.Range{epk.All}, 0, func(d Doc) bool {
			recount[d.EPK()] = recount[d.EPK()].add(1, int64(len(d.JSON)))
			total = total.add(1, int64(len(d.JSON)))
			inOrder = inOrder && d.Seq > last
			last = d.Seq
			return true
		})
		if err != nil {
			s.t.Fatal(err)
		}
		if !inOrder {
			b.WriteString(" OUT OF CREATION ORDER")
		}
		if total.Items != st.Items || total.Bytes != st.Bytes {
			fmt.Fprintf(&b, " MISMATCH: the items stored are %d, %d bytes", total.Items, total.Bytes)
		}
		b.WriteString("\n")
		lo, hi := storage.LogicalSpan(scenarioContainer, string(p.rng.Min), string(p.rng.Max))
		it, err := s.db.NewIter(lo, hi)
		if err != nil {
			s.t.Fatal(err)
		}
		var lines []string
		for it.First(); it.Valid(); it.Next() {
			e, err := storage.ParseLogicalKey(it.Key())
			if err != nil {
				s.t.Fatal(err)
			}
			c, _, err := decodeCounts(it.Value())
			if err != nil {
				s.t.Fatal(err)
			}
			line := fmt.Sprintf("  %s: items=%d bytes=%d", s.pkName(epk.EPK(e)), c.Items, c.Bytes)
			if rc := recount[epk.EPK(e)]; rc != c {
				line += fmt.Sprintf(" MISMATCH: the items stored are %d, %d bytes", rc.Items, rc.Bytes)
			}
			delete(recount, epk.EPK(e))
			lines = append(lines, line)
		}
		if err := errors.Join(it.Error(), it.Close()); err != nil {
			s.t.Fatal(err)
		}
		for e, rc := range recount {
			lines = append(lines, fmt.Sprintf("  %s: NO RECORD for %d items, %d bytes", s.pkName(e), rc.Items, rc.Bytes))
		}
		sort.Strings(lines)
		for _, l := range lines {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

func pairOf(a, b []byte) [2][]byte { return [2][]byte{a, b} }

// itemAt names the item whose document has creation sequence seq, which partition id lists.
func (s *scenario) itemAt(id uint32, seq uint64) itemKey {
	e, err := s.db.GetCopy(nil, storage.OrderKey(nil, scenarioContainer, id, seq))
	if err != nil {
		s.t.Fatalf("order entry %d: %v", seq, err)
	}
	v, err := s.db.GetCopy(nil, storage.DocKey(nil, scenarioContainer, string(e), seq))
	if err != nil {
		s.t.Fatalf("document %d: %v", seq, err)
	}
	d, err := decodeValue(v)
	if err != nil {
		s.t.Fatal(err)
	}
	return itemKey{epk.EPK(e), string(d.id)}
}

func (s *scenario) pkName(e epk.EPK) string {
	if pk, ok := s.pks[e]; ok {
		return pk
	}
	return e.Hex()
}

// itemKey names an item.
type itemKey struct {
	EPK epk.EPK
	ID  string
}

type indexEntry struct {
	c     itemKey
	value string // decoded for printing
	raw   string
}

func (s *scenario) entryName(c itemKey) string { return s.pkName(c.EPK) + "/" + c.ID }

// index prints each open partition's index at path in value order and checks it against the
// items: one entry per item with a value at path, recording its current value, and nothing
// else.
func (s *scenario) index(path string) string {
	if strings.Count(path, "/") != 1 {
		s.t.Fatal("index checks top-level paths only")
	}
	var b strings.Builder
	for _, p := range s.parts {
		var got []indexEntry
		_, err := p.IndexOrdered(path, []byte{0}, []byte{0xff}, epk.All, false, func(d Doc, v []byte) bool {
			got = append(got, indexEntry{c: itemKey{d.EPK(), d.ID()}, value: decodeOrdered(v), raw: string(v)})
			return true
		})
		if err != nil {
			s.t.Fatal(err)
		}
		want := map[itemKey]string{}
		seqOf := map[itemKey]uint64{}
		itemOf := map[uint64]itemKey{}
		complete := true
		var items int
		err = p.Scan([]epk.Range{epk.All}, 0, func(d Doc) bool {
			items++
			e, id := d.EPK(), d.ID()
			seqOf[itemKey{e, id}], itemOf[d.Seq] = d.Seq, itemKey{e, id}
			v, err := value.Parse(d.JSON)
			if err != nil {
				s.t.Fatal(err)
			}
			var at value.Value
			found := false
			for _, m := range v.Members() {
				if "/"+m.Key == path {
					at, found = m.Val, true
				}
			}
			if !found {
				complete = false
				return true
			}
			enc, ok := value.AppendIndexed(nil, at)
			if !ok {
				enc, complete = []byte{value.OrderedMarker(at.Kind())}, false
			}
			want[itemKey{EPK: e, ID: id}] = string(enc)
			return true
		})
		if err != nil {
			s.t.Fatal(err)
		}
		var names []string
		var problems []string
		seen := map[itemKey]bool{}
		for _, g := range got {
			names = append(names, s.entryName(g.c)+"="+g.value)
			w, ok := want[g.c]
			switch {
			case !ok:
				problems = append(problems, "EXTRA "+s.entryName(g.c)+"="+g.value)
			case seen[g.c]:
				problems = append(problems, "DUPLICATE "+s.entryName(g.c)+"="+g.value)
			case w != g.raw:
				problems = append(problems, "STALE "+s.entryName(g.c)+"="+g.value+", the item has "+decodeOrdered([]byte(w)))
			}
			seen[g.c] = true
		}
		for c, w := range want {
			if !seen[c] {
				problems = append(problems, "MISSING "+s.entryName(c)+"="+decodeOrdered([]byte(w)))
			}
		}
		// IndexScan over every value must name the same items, in creation order.
		var scanned []uint64
		err = p.IndexScan(path, []byte{0}, []byte{0xff}, []epk.Range{epk.All}, 0, func(d Doc) bool {
			scanned = append(scanned, d.Seq)
			return true
		})
		if err != nil {
			s.t.Fatal(err)
		}
		var wantScan []uint64
		for c := range seen {
			wantScan = append(wantScan, seqOf[c])
		}
		slices.Sort(wantScan)
		if fmt.Sprint(scanned) != fmt.Sprint(wantScan) {
			problems = append(problems, fmt.Sprintf("IndexScan lists %v, the entries %v", scanned, wantScan))
		}
		// Unbounded, IndexOrdered must answer exactly when every item has a primitive there.
		ok, err := p.IndexOrdered(path, nil, nil, epk.All, false, func(Doc, []byte) bool { return false })
		if err != nil {
			s.t.Fatal(err)
		}
		if ok != complete {
			problems = append(problems, fmt.Sprintf("IndexOrdered says the order is complete: %v, the items: %v", ok, complete))
		}
		// No entry of the partition's index or creation order, at any path, may name an item
		// that is not one of its own.
		for _, span := range [][2][]byte{pairOf(storage.IndexPartitionSpan(scenarioContainer, p.id)), pairOf(storage.OrderPartitionSpan(scenarioContainer, p.id))} {
			it, err := s.db.NewIter(span[0], span[1])
			if err != nil {
				s.t.Fatal(err)
			}
			for it.First(); it.Valid(); it.Next() {
				seq, err := storage.SeqOf(it.Key())
				if err != nil {
					s.t.Fatal(err)
				}
				if _, ok := itemOf[seq]; !ok {
					problems = append(problems, fmt.Sprintf("STRAY entry %x for sequence %d", it.Key()[0], seq))
				}
			}
			if err := errors.Join(it.Error(), it.Close()); err != nil {
				s.t.Fatal(err)
			}
		}
		sort.Strings(problems)
		fmt.Fprintf(&b, "p%d: %s\n", p.id, strings.Join(names, " "))
		for _, pr := range problems {
			b.WriteString("  " + pr + "\n")
		}
	}
	return b.String()
}

// indexEntries lists the raw index entries of partition id (at path, or everywhere).
func (s *scenario) indexEntries(id uint32, path string) string {
	start, end := storage.IndexPartitionSpan(scenarioContainer, id)
	if path != "" {
		prefix := storage.IndexPathPrefix(path)
		start = storage.IndexBound(scenarioContainer, id, prefix)
		end = storage.IndexBound(scenarioContainer, id, append(prefix, 0xff))
	}
	it, err := s.db.NewIter(start, end)
	if err != nil {
		s.t.Fatal(err)
	}
	defer it.Close()
	var out []string
	n := 0
	for it.First(); it.Valid(); it.Next() {
		n++
		if path == "" {
			continue
		}
		v, seq, err := storage.ParseIndexEntry(it.Key(), len(storage.IndexPathPrefix(path)))
		if err != nil {
			s.t.Fatal(err)
		}
		out = append(out, s.entryName(s.itemAt(id, seq))+"="+decodeOrdered(v))
	}
	if err := it.Error(); err != nil {
		s.t.Fatal(err)
	}
	if n == 0 {
		return "none"
	}
	if path == "" {
		return fmt.Sprintf("%d entries", n)
	}
	return strings.Join(out, " ")
}

// decodeOrdered prints a value encoded by value.AppendOrdered, or a marker.
func decodeOrdered(v []byte) string {
	if len(v) == 0 {
		return "?"
	}
	switch v[0] {
	case 0x01:
		return "null"
	case 0x02:
		return "false"
	case 0x03:
		return "true"
	case 0x04:
		if len(v) < 9 {
			return "?"
		}
		bits := binary.BigEndian.Uint64(v[1:9])
		if bits>>63 == 1 {
			bits &^= 1 << 63
		} else {
			bits = ^bits
		}
		return strconv.FormatFloat(math.Float64frombits(bits), 'g', -1, 64)
	case 0x05:
		var out []byte
		for i := 1; i < len(v); i++ {
			if v[i] == 0 && i+1 < len(v) {
				if v[i+1] == 1 {
					break
				}
				i++
			}
			out = append(out, v[i])
		}
		return strconv.Quote(string(out))
	case 0x06:
		return "[...]"
	case 0x07:
		return "{...}"
	}
	return "?"
}

func (s *scenario) splitCmd(td *datadriven.TestData) string {
	t := s.t
	switch td.Cmd {
	case "split-start":
		var hex, pk string
		var left, right uint32
		td.MaybeScanArgs(t, "at", &hex)
		td.MaybeScanArgs(t, "at-pk", &pk)
		td.ScanArgs(t, "left", &left)
		td.ScanArgs(t, "right", &right)
		at := epk.EPK("")
		if pk != "" {
			at = s.epkOf(pk)
		} else {
			var err error
			if at, err = epk.ParseHex(hex); err != nil {
				t.Fatal(err)
			}
		}
		p := s.parts[0]
		for _, q := range s.parts {
			if q.rng.Contains(at) {
				p = q
			}
		}
		sp, err := p.StartSplit(at, left, right)
		if err != nil {
			return kindOf(err)
		}
		s.split = sp
		// The logical partitions that hold items, by the side they go to.
		var l, r []string
		lo, hi := storage.LogicalSpan(scenarioContainer, string(p.rng.Min), string(p.rng.Max))
		it, err := s.db.NewIter(lo, hi)
		if err != nil {
			t.Fatal(err)
		}
		for it.First(); it.Valid(); it.Next() {
			e, err := storage.ParseLogicalKey(it.Key())
			if err != nil {
				t.Fatal(err)
			}
			if epk.EPK(e) < at {
				l = append(l, s.pkName(epk.EPK(e)))
			} else {
				r = append(r, s.pkName(epk.EPK(e)))
			}
		}
		if err := errors.Join(it.Error(), it.Close()); err != nil {
			t.Fatal(err)
		}
		sort.Strings(l)
		sort.Strings(r)
		return fmt.Sprintf("p%d splits at %s: p%d gets %s; p%d gets %s",
			p.id, at.Hex(), left, strings.Join(l, " "), right, strings.Join(r, " "))
	case "split-backfill":
		if err := s.split.Backfill(); err != nil {
			return "error: " + err.Error()
		}
		return fmt.Sprintf("p%d: %s; p%d: %s", s.split.left, s.indexEntries(s.split.left, ""),
			s.split.right, s.indexEntries(s.split.right, ""))
	case "split-abort":
		sp := s.split
		if err := sp.Abort(); err != nil {
			return "error: " + err.Error()
		}
		s.split = nil
		sp.p.split.mu.Lock()
		capturing := sp.p.split.plan != nil
		sp.p.split.mu.Unlock()
		return fmt.Sprintf("aborted; p%d still captures: %v", sp.p.id, capturing)
	case "split-commit":
		sp := s.split
		if err := sp.Commit(nil); err != nil {
			return "error: " + err.Error()
		}
		s.split = nil
		parent := sp.p
		var b strings.Builder
		fmt.Fprintf(&b, "%s (closed)\n", s.describe(parent))
		var sum counts
		var children []*Partition
		for _, c := range []Child{{sp.left, epk.Range{Min: parent.rng.Min, Max: sp.at}}, {sp.right, epk.Range{Min: sp.at, Max: parent.rng.Max}}} {
			child, err := Open(s.config(c.ID, c.Range)) // as the engine opens a range
			if err != nil {
				t.Fatal(err)
			}
			children = append(children, child)
			st := child.Stats()
			sum = sum.add(st.Items, st.Bytes)
			fmt.Fprintf(&b, "%s\n", s.describe(child))
		}
		pst := parent.Stats()
		fmt.Fprintf(&b, "the children's items and bytes sum to the parent's: %v", sum == counts{Items: pst.Items, Bytes: pst.Bytes})
		var parts []*Partition
		for _, q := range s.parts {
			if q == parent {
				parts = append(parts, children...)
			} else {
				parts = append(parts, q)
			}
		}
		s.parts, s.parents = parts, append(s.parents, parent)
		return b.String()
	}
	return ""
}
