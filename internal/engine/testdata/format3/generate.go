//go:build ignore

// Command generate writes the storage format 3 fixture of the format 3 -> 4 migration tests,
// and dumps what the engine reads from it.
//
//	go run ./internal/engine/testdata/format3/generate.go -out DIR    # populate a new data dir
//	go run ./internal/engine/testdata/format3/generate.go -dump DIR   # golden JSON on stdout
//
// Both open the engine with the Options of options(): ChangeFeedRetention 24h, ManualReindex,
// and Now the step clock below.
//
// # The clock
//
// Options.Now is a step clock that starts at 2026-06-01T00:00:00Z (clockStart). Reading it
// never moves it: the generator moves it one second forward before each write it issues
// (tick), and jumps it forward where the scenario needs time to pass (the expiry of a short
// "ttl"). The engine's own reads of the clock (the reaper's passes, reads judging expiry) thus
// cannot make it drift, and every _ts and change feed timestamp follows from the program
// alone. The dump holds the clock at clockStart. Catalog resources' "_ts" (databases,
// containers, scripts, users, permissions) are stamped by the engine with the wall clock,
// which Options.Now does not govern, so they are whatever the run that wrote the fixture saw;
// CQL write times are given explicitly (the step clock, in microseconds).
//
// Any clock from clockStart up to a little before the first default-ttl expiry reads the same
// items (see README.md). The engine applies the all-versions retention with the wall clock
// an hour after it opens (purgeEvery), which would drop the replaced versions' images of a
// fixture stamped in the past: open it for less than an hour.
//
// # The dump
//
// dump (and everything below it) uses the engine's public API only and is self-contained, so
// that it can be ported to a later engine API and compared with golden.json.
package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/partita-db/partita/internal/cqlexec"
	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/engine"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/query"
	"github.com/partita-db/partita/internal/value"
)

// clockStart is where the step clock starts, for the generator and the dump alike.
var clockStart = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)

// stepClock is Options.Now: a time that only the program moves.
type stepClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *stepClock { return &stepClock{t: clockStart} }

// Now is the engine's clock; it does not move the time.
func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the time forward by d.
func (c *stepClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// options are the engine options of the fixture: for writing it and for every reopen.
func options(dir string, clk *stepClock) engine.Options {
	return engine.Options{Dir: dir, ChangeFeedRetention: 24 * time.Hour, ManualReindex: true, Now: clk.Now}
}

func main() {
	out := flag.String("out", "", "populate a new data directory DIR")
	dumpDir := flag.String("dump", "", "print the golden JSON dump of the data directory DIR")
	flag.Parse()
	log.SetFlags(0)
	switch {
	case *out != "" && *dumpDir == "":
		if err := generate(*out); err != nil {
			log.Fatalf("generate: %v", err)
		}
	case *dumpDir != "" && *out == "":
		clk := newClock()
		e, err := engine.Open(options(*dumpDir, clk))
		if err != nil {
			log.Fatalf("open: %v", err)
		}
		doc, derr := dump(e, clk.Now)
		if err := e.Close(); err != nil && derr == nil {
			derr = err
		}
		if derr != nil {
			log.Fatalf("dump: %v", derr)
		}
		os.Stdout.Write(doc)
	default:
		log.Fatal("usage: generate.go -out DIR | -dump DIR")
	}
}

// ---------------------------------------------------------------------------------------
// Generation.

// rng is splitmix64: a fixed sequence whatever the Go version.
type rng struct{ s uint64 }

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func (r *rng) intn(n int) int { return int(r.next() % uint64(n)) }

func pick[T any](r *rng, xs []T) T { return xs[r.intn(len(xs))] }

// obj builds a JSON object with its members in the order given: key, value, key, value...
func obj(kv ...any) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i := 0; i < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(kv[i].(string))
		v, err := json.Marshal(kv[i+1])
		if err != nil {
			panic(err)
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes()
}

type gen struct {
	e   *engine.Engine
	clk *stepClock
	r   *rng
}

// tick moves the clock one second on; called before every write.
func (g *gen) tick() { g.clk.Advance(time.Second) }

func check(err error, what string, args ...any) {
	if err != nil {
		panic(fmt.Errorf("%s: %w", fmt.Sprintf(what, args...), err))
	}
}

func (g *gen) container(id string) *engine.Container {
	c, err := g.e.Container("app", id)
	check(err, "container %s", id)
	return c
}

func (g *gen) create(c *engine.Container, body []byte, o engine.ItemOptions) engine.ItemResult {
	g.tick()
	res, err := c.CreateItem(body, o)
	check(err, "create %s", body[:min(len(body), 80)])
	return res
}

func (g *gen) replace(c *engine.Container, id string, body []byte) engine.ItemResult {
	g.tick()
	res, err := c.ReplaceItem(id, body, engine.ItemOptions{})
	check(err, "replace %s", id)
	return res
}

func (g *gen) upsert(c *engine.Container, body []byte) engine.ItemResult {
	g.tick()
	res, err := c.UpsertItem(body, engine.ItemOptions{})
	check(err, "upsert %s", body[:min(len(body), 80)])
	return res
}

func (g *gen) del(c *engine.Container, key epk.Key, id string) engine.ItemResult {
	g.tick()
	res, err := c.DeleteItem(key, id, engine.ItemOptions{})
	check(err, "delete %s", id)
	return res
}

func (g *gen) read(c *engine.Container, key epk.Key, id string) []byte {
	res, err := c.ReadItem(key, id)
	check(err, "read %s", id)
	return res.Doc
}

func raw(s string) json.RawMessage { return json.RawMessage(s) }

func generate(dir string) (err error) {
	if entries, _ := os.ReadDir(dir); len(entries) > 0 {
		return fmt.Errorf("%s is not empty", dir)
	}
	clk := newClock()
	e, err := engine.Open(options(dir, clk))
	if err != nil {
		return err
	}
	defer func() {
		if r := recover(); r != nil {
			e.Close()
			err = fmt.Errorf("%v", r)
			return
		}
		if cerr := e.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	g := &gen{e: e, clk: clk, r: &rng{s: 20260601}}
	_, err = e.CreateDatabase("app", &engine.Throughput{Manual: 1000})
	check(err, "database app")
	g.orders()
	g.events()
	g.legacy()
	g.ttl()
	g.unique()
	g.reindexing()
	g.scratch()
	g.cql()
	log.Printf("clock at the end: %s", clk.Now().Format(time.RFC3339))
	return nil
}

var (
	statuses = []string{"new", "paid", "shipped", "delivered", "cancelled"}
	cities   = []string{"Lisbon", "Oslo", "Kraków", "Nairobi", "Osaka", "Montréal", "Quito", "Perth"}
	products = []string{"pen", "ink", "paper", "stapler", "lamp", "desk", "chair", "mug", "notebook"}
	tagWords = []string{"rush", "gift", "fragile", "bulk", "repeat", "vip"}
)

func (g *gen) orderBody(n int, cust string, version int) json.RawMessage {
	r := g.r
	var lines []json.RawMessage
	total := 0.0
	for i := 0; i < 1+r.intn(4); i++ {
		price := float64(100+r.intn(20000)) / 100
		qty := 1 + r.intn(5)
		total += price * float64(qty)
		lines = append(lines, obj("sku", pick(r, products), "qty", qty, "price", price))
	}
	tags := []string{}
	for i := 0; i < r.intn(3); i++ {
		tags = append(tags, pick(r, tagWords))
	}
	total = float64(int64(total*100)) / 100
	return obj("id", fmt.Sprintf("o-%04d", n), "customer", cust, "status", pick(r, statuses),
		"total", total, "qty", len(lines), "version", version,
		"address", obj("city", pick(r, cities), "zip", fmt.Sprintf("%05d", r.intn(100000)), "geo", []float64{float64(r.intn(180)) - 90, float64(r.intn(360)) - 180}),
		"tags", tags, "lines", lines, "note", nil, "gift", r.intn(5) == 0)
}

// orders: ~300 items over 40 customers, rewritten in every way, split twice, written again.
func (g *gen) orders() {
	_, err := g.e.CreateContainer("app", engine.ContainerSpec{
		ID: "orders", PartitionKey: engine.PartitionKeyDef{Paths: []string{"/customer"}, Kind: "Hash", Version: 2},
		Throughput: &engine.Throughput{Manual: 400},
	})
	check(err, "container orders")
	c := g.container("orders")
	live := map[string]string{} // id -> customer
	excluded := map[string]bool{}
	var ids []string // live ids in creation order (deletes remove them)
	cust := func(n int) string {
		if n < 40 {
			return fmt.Sprintf("c-%02d", n)
		}
		return fmt.Sprintf("c-%02d", g.r.intn(40))
	}
	next := 0
	add := func(o engine.ItemOptions) engine.ItemResult {
		id, cu := fmt.Sprintf("o-%04d", next), cust(next)
		res := g.create(c, g.orderBody(next, cu, 1), o)
		next++
		live[id] = cu
		ids = append(ids, id)
		if o.IndexingDirective == engine.DirectiveExclude {
			excluded[id] = true
		}
		return res
	}
	for next < 300 {
		o := engine.ItemOptions{}
		if next%37 == 11 {
			o.IndexingDirective = engine.DirectiveExclude // kept out of the index: an unindexed marker
		}
		add(o)
	}
	// One item of about 100 KB.
	blob := make([]byte, 0, 100<<10)
	for len(blob) < 100<<10 {
		blob = strconv.AppendUint(blob, g.r.next(), 36)
	}
	g.create(c, obj("id", "o-big", "customer", "c-00", "status", "archived", "total", 0, "blob", string(blob)), engine.ItemOptions{})
	live["o-big"] = "c-00"

	key := func(id string) epk.Key { return epk.Key{epk.String(live[id])} }
	modifiable := func() []string {
		var out []string
		for _, id := range ids {
			if _, ok := live[id]; ok && !excluded[id] {
				out = append(out, id)
			}
		}
		return out
	}
	remove := func(id string) {
		g.del(c, key(id), id)
		delete(live, id)
	}
	// Replaces, upserts (of existing items and new ones), patches and deletes.
	m := modifiable()
	for i := 0; i < 30; i++ {
		id := m[(i*7)%len(m)]
		n, _ := strconv.Atoi(strings.TrimPrefix(id, "o-"))
		g.replace(c, id, g.orderBody(n, live[id], 2))
	}
	for i := 0; i < 20; i++ {
		id := m[(i*11+3)%len(m)]
		n, _ := strconv.Atoi(strings.TrimPrefix(id, "o-"))
		g.upsert(c, g.orderBody(n, live[id], 3))
	}
	for i := 0; i < 5; i++ {
		id, cu := fmt.Sprintf("o-%04d", next), cust(next)
		g.upsert(c, g.orderBody(next, cu, 1))
		live[id] = cu
		ids = append(ids, id)
		next++
	}
	cond, err := query.PrepareCondition("FROM c WHERE c.qty > 0")
	check(err, "condition")
	for i := 0; i < 20; i++ {
		id := m[(i*13+5)%len(m)]
		p := engine.Patch{Ops: []document.PatchOp{
			{Op: "set", Path: "/status", Value: raw(`"patched"`)},
			{Op: "incr", Path: "/qty", Value: raw(`1`)},
			{Op: "add", Path: "/tags/-", Value: raw(`"patched"`)},
			{Op: "set", Path: "/address/city", Value: raw(`"Patchville"`)},
		}}
		if i%4 == 0 {
			p.Ops = append(p.Ops, document.PatchOp{Op: "remove", Path: "/note"})
			p.Condition = cond
		}
		g.tick()
		_, err := c.PatchItem(key(id), id, p, engine.ItemOptions{})
		check(err, "patch %s", id)
	}
	for i := 0; i < 15; i++ {
		m = modifiable()
		remove(m[(i*17+1)%len(m)])
	}

	// Scripts: a stored procedure, a pre-trigger and a UDF, each used once.
	_, err = c.CreateScript(engine.Script{Kind: engine.ProcedureScript, ID: "addOrder", Body: `function addOrder(id, customer, total) {
	var coll = getContext().getCollection();
	var ok = coll.createDocument(coll.getSelfLink(), {id: id, customer: customer, status: "new", total: total, qty: 1, via: "sproc"},
		function (err, doc) { if (err) throw err; getContext().getResponse().setBody(doc.id); });
	if (!ok) throw new Error("not accepted");
}`})
	check(err, "sproc")
	_, err = c.CreateScript(engine.Script{Kind: engine.TriggerScript, ID: "stampCreated", TriggerType: "Pre", TriggerOperation: "Create",
		Body: `function stampCreated() {
	var req = getContext().getRequest();
	var item = req.getBody();
	item.stamped = true;
	req.setBody(item);
}`})
	check(err, "trigger")
	_, err = c.CreateScript(engine.Script{Kind: engine.FunctionScript, ID: "tax", Body: `function tax(total) { return Math.round(total * 23) / 100; }`})
	check(err, "udf")
	g.tick()
	_, err = c.ExecuteProcedure("addOrder", []byte(`["o-sproc","c-03",42.5]`), engine.ProcedureOptions{PartitionKey: epk.Key{epk.String("c-03")}})
	check(err, "run sproc")
	live["o-sproc"] = "c-03"
	g.create(c, obj("id", "o-trig", "customer", "c-04", "status", "new", "total", 7.25, "qty", 1), engine.ItemOptions{PreTriggers: []string{"stampCreated"}})
	live["o-trig"] = "c-04"

	// A transactional batch in c-05.
	var b5 []string
	for _, id := range modifiable() {
		if live[id] == "c-05" {
			b5 = append(b5, id)
		}
	}
	if len(b5) < 3 {
		panic("c-05 has too few orders for the batch")
	}
	g.tick()
	res, failed, err := c.ExecuteBatch(epk.Key{epk.String("c-05")}, []engine.BatchOp{
		{Kind: engine.OpCreate, Item: document.FromJSON(obj("id", "o-batch-1", "customer", "c-05", "status", "new", "total", 10.5, "qty", 1))},
		{Kind: engine.OpUpsert, Item: document.FromJSON(obj("id", "o-batch-2", "customer", "c-05", "status", "new", "total", 20, "qty", 2))},
		{Kind: engine.OpRead, ID: b5[0]},
		{Kind: engine.OpReplace, ID: b5[0], Item: document.FromJSON(obj("id", b5[0], "customer", "c-05", "status", "batched", "total", 99.99, "qty", 3))},
		{Kind: engine.OpPatch, ID: b5[1], Patch: engine.Patch{Ops: []document.PatchOp{{Op: "set", Path: "/status", Value: raw(`"batch-patched"`)}}}},
		{Kind: engine.OpDelete, ID: b5[2]},
	})
	check(err, "batch")
	if failed >= 0 {
		panic(fmt.Sprintf("batch op %d failed: %v", failed, res[failed].Err))
	}
	live["o-batch-1"], live["o-batch-2"] = "c-05", "c-05"
	delete(live, b5[2])

	// Two splits: 0 into 1 and 2, then 1 into 3 and 4 (whose parents are 0 and 1).
	first, err := g.e.SplitPartition("app", "orders", 0, nil)
	check(err, "split 0")
	second, err := g.e.SplitPartition("app", "orders", first[0].ID, nil)
	check(err, "split %d", first[0].ID)
	log.Printf("orders: split 0 -> %d,%d; %d -> %d,%d (parents %v)", first[0].ID, first[1].ID, first[0].ID, second[0].ID, second[1].ID, second[0].Parents)

	// After the splits: creates, replaces, patches and deletes in every partition.
	byPart := map[uint32][]string{}
	for _, id := range modifiable() {
		if strings.HasPrefix(id, "o-0") {
			res, err := c.ReadItem(key(id), id)
			check(err, "read %s", id)
			byPart[res.PartitionID] = append(byPart[res.PartitionID], id)
		}
	}
	parts := []uint32{first[1].ID, second[0].ID, second[1].ID}
	for _, p := range parts {
		if len(byPart[p]) < 6 {
			panic(fmt.Sprintf("partition %d holds only %d modifiable orders", p, len(byPart[p])))
		}
		for j, id := range byPart[p][:3] {
			n, _ := strconv.Atoi(strings.TrimPrefix(id, "o-"))
			if j == 2 {
				g.tick()
				_, err := c.PatchItem(key(id), id, engine.Patch{Ops: []document.PatchOp{{Op: "incr", Path: "/total", Value: raw(`1.5`)}}}, engine.ItemOptions{})
				check(err, "patch %s", id)
				continue
			}
			g.replace(c, id, g.orderBody(n, live[id], 4))
		}
		for _, id := range byPart[p][3:5] {
			remove(id)
		}
	}
	created := map[uint32]int{}
	for i := 0; i < 30; i++ {
		o := engine.ItemOptions{}
		if i == 29 {
			o.IndexingDirective = engine.DirectiveExclude
		}
		res := add(o)
		created[res.PartitionID]++
	}
	for _, p := range parts {
		if created[p] == 0 {
			panic(fmt.Sprintf("no order created in partition %d after the splits", p))
		}
	}
	log.Printf("orders: %d live items; created after the splits per partition: %v", len(live), created)

	// A user with a permission on orders (and one on a prefix of events, below).
	_, err = g.e.CreateUser("app", "alice")
	check(err, "user")
	_, err = g.e.CreatePermission("app", "alice", engine.PermissionSpec{ID: "orders-all", Mode: "All", Resource: "dbs/app/colls/orders"})
	check(err, "permission")
	_, err = g.e.CreatePermission("app", "alice", engine.PermissionSpec{ID: "orders-c07-read", Mode: "Read", Resource: "dbs/app/colls/orders", PartitionKey: epk.Key{epk.String("c-07")}})
	check(err, "permission")
	_, err = g.e.CreateUser("app", "bob")
	check(err, "user")
}

// events: a hierarchical key (/tenant, /user), autoscale throughput.
func (g *gen) events() {
	_, err := g.e.CreateContainer("app", engine.ContainerSpec{
		ID: "events", PartitionKey: engine.PartitionKeyDef{Paths: []string{"/tenant", "/user"}, Kind: "MultiHash", Version: 2},
		Throughput: &engine.Throughput{AutoscaleMax: 1000},
	})
	check(err, "container events")
	c := g.container("events")
	kinds := []string{"login", "click", "purchase", "logout"}
	for i := 0; i < 36; i++ {
		t, u := fmt.Sprintf("t%d", 1+i%3), fmt.Sprintf("u%d", 1+(i/3)%5)
		g.create(c, obj("id", fmt.Sprintf("e-%03d", i), "tenant", t, "user", u, "kind", pick(g.r, kinds), "n", i,
			"payload", obj("ms", g.r.intn(5000), "ok", g.r.intn(4) != 0)), engine.ItemOptions{})
	}
	g.replace(c, "e-004", obj("id", "e-004", "tenant", "t2", "user", "u2", "kind", "replaced", "n", 4))
	g.del(c, epk.Key{epk.String("t3"), epk.String("u1")}, "e-002")
	_, err = g.e.CreatePermission("app", "alice", engine.PermissionSpec{ID: "events-t1-read", Mode: "read", Resource: "dbs/app/colls/events", PartitionKey: epk.Key{epk.String("t1")}})
	check(err, "permission")
}

// legacy: hash version 1 on /pk, string, number and missing keys.
func (g *gen) legacy() {
	_, err := g.e.CreateContainer("app", engine.ContainerSpec{
		ID: "legacy", PartitionKey: engine.PartitionKeyDef{Paths: []string{"/pk"}, Kind: "Hash", Version: 1},
	})
	check(err, "container legacy")
	c := g.container("legacy")
	for i := 0; i < 30; i++ {
		var pk any = fmt.Sprintf("p%02d", i%10)
		if i%6 == 5 {
			pk = i % 4
		}
		g.create(c, obj("id", fmt.Sprintf("l-%02d", i), "pk", pk, "name", fmt.Sprintf("legacy item %d", i), "weight", float64(i)*1.25), engine.ItemOptions{})
	}
	g.create(c, obj("id", "l-nokey", "name", "no partition key"), engine.ItemOptions{})
	g.upsert(c, obj("id", "l-03", "pk", "p03", "name", "upserted", "weight", -1))
	g.del(c, epk.Key{epk.String("p07")}, "l-07")
}

// ttl: defaultTtl 100000 s; items with their own ttl, one that expires and is reaped.
func (g *gen) ttl() {
	def := int64(100000)
	_, err := g.e.CreateContainer("app", engine.ContainerSpec{
		ID: "ttl", PartitionKey: engine.PartitionKeyDef{Paths: []string{"/pk"}, Kind: "Hash", Version: 2}, DefaultTTL: &def,
	})
	check(err, "container ttl")
	c := g.container("ttl")
	for i := 0; i < 20; i++ {
		kv := []any{"id", fmt.Sprintf("t-%02d", i), "pk", fmt.Sprintf("k%d", i%4), "n", i}
		switch i % 4 {
		case 1:
			kv = append(kv, "ttl", -1)
		case 2:
			kv = append(kv, "ttl", 500000)
		}
		g.create(c, obj(kv...), engine.ItemOptions{})
	}
	g.create(c, obj("id", "short", "pk", "k0", "n", -1, "ttl", 60), engine.ItemOptions{})
	g.clk.Advance(120 * time.Second) // "short" expires
	// Wait for the reaper to delete it, so that it is gone from storage whatever the clock a
	// reader of the fixture uses.
	deadline := time.Now().Add(60 * time.Second)
	for {
		if g.reaped(c, "short") {
			break
		}
		if time.Now().After(deadline) {
			panic("the reaper did not delete the expired item in a minute")
		}
		time.Sleep(200 * time.Millisecond)
	}
	log.Printf("ttl: the expired item was reaped")
	g.replace(c, "t-00", obj("id", "t-00", "pk", "k0", "n", 100))
}

// reaped reports whether c's all-versions change feed holds the expired delete of id.
func (g *gen) reaped(c *engine.Container, id string) bool {
	for _, p := range c.Partitions() {
		after := uint64(0)
		for {
			page, err := c.ChangeFeed(engine.FeedQuery{Range: p.Range(), Start: engine.FeedStart{HasAfter: true, After: after}, AllVersions: true})
			check(err, "change feed")
			if len(page.Changes) == 0 {
				break
			}
			for _, ch := range page.Changes {
				if ch.ID == id && ch.Expired {
					return true
				}
			}
			after = page.Through
		}
	}
	return false
}

// unique: a unique key on /email.
func (g *gen) unique() {
	_, err := g.e.CreateContainer("app", engine.ContainerSpec{
		ID: "unique", PartitionKey: engine.PartitionKeyDef{Paths: []string{"/team"}, Kind: "Hash", Version: 2},
		UniqueKeys: raw(`{"uniqueKeys":[{"paths":["/email"]}]}`),
	})
	check(err, "container unique")
	c := g.container("unique")
	for i := 0; i < 20; i++ {
		g.create(c, obj("id", fmt.Sprintf("u-%02d", i), "team", fmt.Sprintf("team-%d", i%3), "email", fmt.Sprintf("user%02d@example.com", i), "name", fmt.Sprintf("User %d", i)), engine.ItemOptions{})
	}
	g.tick()
	if _, err := c.CreateItem(obj("id", "u-dup", "team", "team-0", "email", "user00@example.com"), engine.ItemOptions{}); err == nil {
		panic("the unique key let a duplicate in")
	}
	g.replace(c, "u-01", obj("id", "u-01", "team", "team-1", "email", "renamed01@example.com", "name", "User 1"))
	g.del(c, epk.Key{epk.String("team-2")}, "u-02")
	// Its email is free again.
	g.create(c, obj("id", "u-20", "team", "team-2", "email", "user02@example.com", "name", "User 20"), engine.ItemOptions{})
}

// reindexing: an indexing policy change whose rebuild ManualReindex leaves in flight.
func (g *gen) reindexing() {
	_, err := g.e.CreateContainer("app", engine.ContainerSpec{
		ID: "reindexing", PartitionKey: engine.PartitionKeyDef{Paths: []string{"/pk"}, Kind: "Hash", Version: 2},
	})
	check(err, "container reindexing")
	c := g.container("reindexing")
	for i := 0; i < 100; i++ {
		g.create(c, obj("id", fmt.Sprintf("r-%03d", i), "pk", fmt.Sprintf("g%d", i%8), "score", g.r.intn(100), "name", fmt.Sprintf("n%03d", 99-i), "category", pick(g.r, products)), engine.ItemOptions{})
	}
	g.tick()
	info, err := g.e.ReplaceContainer("app", "reindexing", engine.ContainerReplace{
		Indexing: raw(`{"indexingMode":"consistent","automatic":true,"includedPaths":[{"path":"/score/?"},{"path":"/category/?"}],"excludedPaths":[{"path":"/*"}]}`),
	})
	check(err, "replace container")
	if info.IndexProgress >= 100 {
		panic("the rebuild is not in flight")
	}
	for i := 100; i < 105; i++ {
		g.create(c, obj("id", fmt.Sprintf("r-%03d", i), "pk", fmt.Sprintf("g%d", i%8), "score", g.r.intn(100), "name", fmt.Sprintf("n%03d", i), "category", pick(g.r, products)), engine.ItemOptions{})
	}
	info, err = g.e.ContainerInfo("app", "reindexing")
	check(err, "info")
	log.Printf("reindexing: index progress %d%%", info.IndexProgress)
}

// scratch: a container created, filled and deleted.
func (g *gen) scratch() {
	_, err := g.e.CreateContainer("app", engine.ContainerSpec{
		ID: "scratch", PartitionKey: engine.PartitionKeyDef{Paths: []string{"/pk"}, Kind: "Hash", Version: 2},
	})
	check(err, "container scratch")
	c := g.container("scratch")
	for i := 0; i < 20; i++ {
		g.create(c, obj("id", fmt.Sprintf("s-%02d", i), "pk", fmt.Sprintf("s%d", i%3), "gone", true), engine.ItemOptions{})
	}
	g.tick()
	check(g.e.DeleteContainer("app", "scratch", ""), "delete scratch")
}

// cql: a keyspace and a table, written through the CQL executor as the CQL front end does.
func (g *gen) cql() {
	x := cqlexec.New(g.e, nil)
	s := &cqlexec.Session{}
	run := func(stmt string) {
		g.tick()
		p, err := x.Prepare(s, stmt)
		check(err, "prepare %s", stmt)
		_, err = x.Execute(s, p, cqlexec.Options{Timestamp: g.clk.Now().UnixMicro(), HasTimestamp: true})
		check(err, "execute %s", stmt)
	}
	run(`CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`)
	run(`USE shop`)
	run(`CREATE TABLE carts (customer text, placed int, item text, qty int, tags set<text>, prices map<text, double>, note text STATIC, PRIMARY KEY (customer, placed)) WITH CLUSTERING ORDER BY (placed DESC)`)
	for i := 0; i < 30; i++ {
		run(fmt.Sprintf(`INSERT INTO carts (customer, placed, item, qty, tags, prices) VALUES ('c-%02d', %d, '%s', %d, {'%s', 'x%d'}, {'%s': %d.5})`,
			i%8, 1000+i, pick(g.r, products), 1+g.r.intn(6), pick(g.r, tagWords), i%3, pick(g.r, products), g.r.intn(90)))
	}
	run(`UPDATE carts SET note = 'regular' WHERE customer = 'c-01'`)
	run(`UPDATE carts SET qty = 99, tags = tags + {'updated'} WHERE customer = 'c-02' AND placed = 1002`)
	run(`DELETE FROM carts WHERE customer = 'c-03' AND placed = 1003`)
	run(`DELETE prices FROM carts WHERE customer = 'c-04' AND placed = 1004`)
}

// ---------------------------------------------------------------------------------------
// Dump. Self-contained: only the engine's API, no wall-clock values (catalog "_ts" are
// stored, not read from a clock), everything in a stable order; maps marshal with sorted keys.

type M = map[string]any

// queries are the queries run over each container, as the gateway prepares and runs them
// (query.Prepare, then Container.Query page by page over the whole EPK space).
var queries = map[string][]string{
	"orders": {
		"SELECT c.id, c.customer, c.total FROM c WHERE c.total > 300 AND c.status != 'cancelled'",
		"SELECT c.id, c.total FROM c ORDER BY c.total DESC",
		"SELECT VALUE COUNT(1) FROM c",
		"SELECT c.id, udf.tax(c.total) AS tax FROM c WHERE c.customer = 'c-07'",
	},
	"events": {
		"SELECT c.id, c.user, c.kind FROM c WHERE c.tenant = 't1' AND c.payload.ok = true",
		"SELECT c.id, c.n FROM c ORDER BY c.n",
		"SELECT VALUE COUNT(1) FROM c",
	},
	"reindexing": {
		"SELECT c.id, c.score FROM c WHERE c.score >= 50 ORDER BY c.score",
		"SELECT VALUE COUNT(1) FROM c",
		"SELECT c.id FROM c ORDER BY c.name",
	},
}

var defaultQueries = []string{
	"SELECT c.id, c._ts FROM c WHERE IS_DEFINED(c.id) ORDER BY c.id",
	"SELECT VALUE COUNT(1) FROM c",
}

// dump reads everything the engine serves of the account; now is the time queries run at.
func dump(e *engine.Engine, now func() time.Time) ([]byte, error) {
	out := M{"catalogVersion": e.CatalogVersion()}
	dbs := []any{}
	for _, d := range e.Databases() {
		dm := M{"resource": resourceJSON(d.Resource), "throughput": throughputJSON(d.Throughput), "meta": rawJSON(d.Meta)}
		infos, err := e.Containers(d.ID)
		if err != nil {
			return nil, err
		}
		cs := []any{}
		for _, info := range infos {
			cm, err := dumpContainer(e, d.ID, info, now)
			if err != nil {
				return nil, fmt.Errorf("container %s/%s: %w", d.ID, info.ID, err)
			}
			cs = append(cs, cm)
		}
		dm["containers"] = cs
		users, err := e.Users(d.ID)
		if err != nil {
			return nil, err
		}
		us := []any{}
		for _, u := range users {
			perms, err := e.Permissions(d.ID, u.ID)
			if err != nil {
				return nil, err
			}
			ps := []any{}
			for _, p := range perms {
				ps = append(ps, M{"resource": resourceJSON(p.Resource), "mode": string(p.Mode), "link": p.Link,
					"partitionKey": keyJSON(p.PartitionKey),
					"grant": M{"permission": p.Grant.Permission.String(), "container": p.Grant.Container.String(),
						"mode": string(p.Grant.Mode), "partitionKey": keyJSON(p.Grant.PartitionKey)}})
			}
			us = append(us, M{"resource": resourceJSON(u.Resource), "permissions": ps})
		}
		dm["users"] = us
		dbs = append(dbs, dm)
	}
	out["databases"] = dbs
	offers := []any{}
	for _, o := range e.Offers() {
		offers = append(offers, M{"id": o.ID, "resourceRid": o.ResourceRID, "resourceSelf": o.ResourceSelf,
			"throughput": throughputJSON(&o.Throughput), "etag": o.ETag(), "ts": o.TS})
	}
	out["offers"] = offers
	b, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

func resourceJSON(r engine.Resource) M {
	return M{"id": r.ID, "rid": r.RID, "self": r.Self, "etag": r.ETag, "ts": r.TS}
}

func throughputJSON(t *engine.Throughput) any {
	if t == nil {
		return nil
	}
	return M{"manual": t.Manual, "autoscaleMax": t.AutoscaleMax}
}

// rawJSON keeps a JSON value as the engine gave it, as a string; nil for none.
func rawJSON(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
}

func keyJSON(k epk.Key) any {
	if k == nil {
		return nil
	}
	out := make([]any, len(k))
	for i, v := range k {
		out[i] = M{"kind": v.Kind.String(), "num": v.Num, "str": v.Str}
	}
	return out
}

func dumpContainer(e *engine.Engine, dbID string, info engine.ContainerInfo, now func() time.Time) (M, error) {
	cm := M{
		"resource":        resourceJSON(info.Resource),
		"partitionKey":    M{"paths": info.PartitionKey.Paths, "kind": info.PartitionKey.Kind, "version": info.PartitionKey.Version},
		"throughput":      throughputJSON(info.Throughput),
		"indexingPolicy":  rawJSON(info.Indexing),
		"rangeGeneration": info.RangeGeneration,
		"defaultTtl":      info.DefaultTTL,
		"uniqueKeys":      rawJSON(info.UniqueKeys),
		"indexProgress":   info.IndexProgress,
		"meta":            rawJSON(info.Meta),
	}
	parts := []any{}
	for _, p := range info.Partitions {
		parents := []uint32{}
		parents = append(parents, p.Parents...)
		parts = append(parts, M{"id": p.ID, "min": p.Range.Min.Hex(), "max": p.Range.Max.Hex(), "parents": parents,
			"lsn": p.LSN, "items": p.Items, "bytes": p.Bytes})
	}
	cm["partitions"] = parts

	if info.PartitionKey.Kind == engine.TableKind {
		t, err := e.Table(dbID, info.ID)
		if err != nil {
			return nil, err
		}
		rows := []any{}
		_, err = t.ScanRows(engine.RowPos{}, engine.RowEnd, false, func(k epk.EPK, id string, doc []byte) bool {
			rows = append(rows, M{"epk": k.Hex(), "id": hex.EncodeToString([]byte(id)), "doc": string(doc)})
			return true
		})
		if err != nil {
			return nil, err
		}
		cm["rows"] = rows
		return cm, nil
	}

	c, err := e.Container(dbID, info.ID)
	if err != nil {
		return nil, err
	}
	cm["scripts"] = dumpScripts(c)

	// The read feed, page by page over the whole range.
	items := []any{}
	var docs [][]byte
	pages := 0
	for token := ""; ; {
		page, err := c.ReadFeed(epk.All, token, 37)
		if err != nil {
			return nil, fmt.Errorf("read feed: %w", err)
		}
		pages++
		for _, d := range page.Docs {
			items = append(items, string(d))
			docs = append(docs, d)
		}
		if page.Next == "" {
			break
		}
		token = page.Next
	}
	cm["readFeed"] = M{"pageSize": 37, "pages": pages, "items": items}

	// A point read of every item.
	reads := []any{}
	for _, d := range docs {
		id, key, err := idAndKey(d, info.PartitionKey.Paths)
		if err != nil {
			return nil, err
		}
		res, err := c.ReadItem(key, id)
		r := M{"id": id, "partitionKey": keyJSON(key)}
		if err != nil {
			r["error"] = err.Error()
		} else {
			r["etag"], r["json"] = res.ETag, string(res.Doc)
		}
		reads = append(reads, r)
	}
	cm["pointReads"] = reads

	// The change feed of every partition key range, latest versions from the beginning, and
	// all versions and deletes after LSN 0.
	latest, all := []any{}, []any{}
	for _, p := range info.Partitions {
		l, err := feed(c, p, engine.FeedStart{}, false)
		if err != nil {
			return nil, err
		}
		latest = append(latest, l)
		a, err := feed(c, p, engine.FeedStart{HasAfter: true, After: 0}, true)
		if err != nil {
			return nil, err
		}
		all = append(all, a)
	}
	cm["changeFeedLatest"] = latest
	cm["changeFeedAllVersions"] = all

	qs := queries[info.ID]
	if qs == nil {
		qs = defaultQueries
	}
	qout := []any{}
	for _, text := range qs {
		qout = append(qout, runQuery(c, text, now()))
	}
	cm["queries"] = qout
	return cm, nil
}

func dumpScripts(c *engine.Container) M {
	out := M{}
	for _, k := range []engine.ScriptKind{engine.ProcedureScript, engine.TriggerScript, engine.FunctionScript} {
		list := []any{}
		for _, s := range c.Scripts(k) {
			list = append(list, M{"id": s.ID, "body": s.Body, "triggerType": s.TriggerType, "triggerOperation": s.TriggerOperation,
				"rid": s.RID, "self": s.Self, "etag": s.ETag, "ts": s.TS})
		}
		out[k.String()] = list
	}
	return out
}

// feed reads the change feed of one partition key range to its end, page by page.
func feed(c *engine.Container, p engine.PartitionInfo, start engine.FeedStart, allVersions bool) (M, error) {
	out := M{"partition": p.ID}
	changes := []any{}
	pages := 0
	for {
		page, err := c.ChangeFeed(engine.FeedQuery{Range: p.Range, Start: start, AllVersions: allVersions, Max: 25})
		if err != nil {
			out["error"] = err.Error()
			break
		}
		pages++
		for _, ch := range page.Changes {
			changes = append(changes, M{"lsn": ch.LSN, "op": ch.Op.String(), "ts": ch.TS, "id": ch.ID, "json": rawJSON(ch.JSON),
				"prevLsn": ch.PrevLSN, "prev": rawJSON(ch.Prev), "key": keyJSON(ch.Key), "expired": ch.Expired})
		}
		out["through"] = page.Through
		if len(page.Changes) == 0 {
			break
		}
		start = engine.FeedStart{HasAfter: true, After: page.Through}
	}
	out["pages"] = pages
	out["changes"] = changes
	return out, nil
}

// runQuery runs a query as the gateway does, page by page, and records its results or error.
func runQuery(c *engine.Container, text string, now time.Time) M {
	out := M{"query": text}
	p, err := query.Prepare(text)
	if err != nil {
		out["error"] = err.Error()
		return out
	}
	results := []any{}
	pages := 0
	for cont := ""; ; {
		res, err := c.Query(p, epk.All, query.Options{MaxItems: 40, Continuation: cont, Now: now})
		if err != nil {
			out["error"] = err.Error()
			break
		}
		pages++
		for _, v := range res.Results {
			results = append(results, string(value.AppendJSON(nil, v)))
		}
		if res.Next == "" {
			break
		}
		cont = res.Next
	}
	out["pages"] = pages
	out["results"] = results
	return out
}

// idAndKey reads an item's id and its partition key values at paths ("/a/b"): strings,
// numbers, booleans and null as they are, anything else or nothing as undefined.
func idAndKey(doc []byte, paths []string) (string, epk.Key, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		return "", nil, err
	}
	id, ok := v["id"].(string)
	if !ok {
		return "", nil, errors.New("an item without a string id")
	}
	key := make(epk.Key, len(paths))
	for i, path := range paths {
		var cur any = v
		for _, seg := range strings.Split(strings.TrimPrefix(path, "/"), "/") {
			m, ok := cur.(map[string]any)
			if !ok {
				cur = undefined{}
				break
			}
			if cur, ok = m[seg]; !ok {
				cur = undefined{}
				break
			}
		}
		switch x := cur.(type) {
		case string:
			key[i] = epk.String(x)
		case json.Number:
			f, err := x.Float64()
			if err != nil {
				return "", nil, err
			}
			key[i] = epk.Number(f)
		case bool:
			key[i] = epk.Bool(x)
		case nil:
			key[i] = epk.Null()
		default:
			key[i] = epk.Undefined()
		}
	}
	return id, key, nil
}

type undefined struct{}
