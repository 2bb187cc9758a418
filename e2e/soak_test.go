package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/controlplane/controlplanetest"
)

// TestSoak runs a mixed load against one server for a while (PARTITA_SOAK, a Go duration;
// 90s by default so that CI stays short) and checks that it leaves nothing behind: creates,
// upserts, replaces, deletes, point reads, single- and cross-partition queries and change
// feed reads from several workers, on a container whose partitions split as it grows (at 256 KiB)
// and whose throughput is low enough that some requests are throttled (429, retried after
// the time the server names). Every answer is checked as it comes, and at the end every
// item acknowledged is present with its last content and nothing else is.
//
// After a warm-up the load pauses and the server's goroutines, heap and open files are
// sampled; at the end, with the load stopped and the server settled, they are sampled again
// and must be flat: see checkFlat for the slack each gets and why.
func TestSoak(t *testing.T) {
	duration := 90 * time.Second
	if v := os.Getenv("PARTITA_SOAK"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			t.Fatalf("PARTITA_SOAK=%q is not a positive Go duration (e.g. 90s, 5m)", v)
		}
		duration = d
	}
	warmUp := min(duration/6, 30*time.Second)

	debugAddr := controlplanetest.FreeAddr(t)
	s := startServer(t, false, "--partition-max-bytes", "262144", "--debug-addr", debugAddr)
	c := rawClient{s: s, key: emulatorKey, now: time.Now}
	if code, _, b := c.do(t, "POST", "/dbs", []byte(`{"id":"db"}`), nil); code != 201 {
		t.Fatalf("create database: %d %s", code, b)
	}
	if code, _, b := c.do(t, "POST", "/dbs/db/colls", []byte(`{"id":"c","partitionKey":{"paths":["/pk"],"version":2}}`),
		map[string]string{"x-ms-offer-throughput": strconv.Itoa(soakThroughput)}); code != 201 {
		t.Fatalf("create container: %d %s", code, b)
	}
	probe := &soakProbe{t: t, s: s, debug: "http://" + debugAddr, client: &http.Client{
		Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}}

	l := &soakLoad{c: c}
	for w := range soakWorkers {
		l.workers = append(l.workers, &soakWorker{l: l, n: w, rng: rand.New(rand.NewPCG(uint64(w), 17)), items: map[string]soakItem{}})
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, w := range l.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.run(t, stop)
		}()
	}

	time.Sleep(warmUp)
	l.pause.Lock() // every worker between two requests
	base := probe.settle()
	l.pause.Unlock()
	time.Sleep(duration - warmUp)
	close(stop)
	wg.Wait()
	if t.Failed() {
		return
	}
	end := probe.settle()

	// Every acknowledged item, with its last content, and nothing else.
	want := map[string]soakItem{}
	for _, w := range l.workers {
		for id, it := range w.items {
			want[id] = it
		}
	}
	got := readAllItems(t, c)
	bad := 0
	for id, it := range want {
		m, ok := got[id]
		if !ok || m["pk"] != it.pk || m["v"] != float64(it.v) || m["pad"] != strings.Repeat("x", it.pad) {
			if bad++; bad <= 10 {
				t.Errorf("item %s: stored %v (present %v), acknowledged %+v", id, m, ok, it)
			}
		}
		delete(got, id)
	}
	if len(got) > 0 {
		t.Errorf("%d items stored that no acknowledged write left, e.g. %v", len(got), anyKey(got))
	}
	if n := countItems(t, c); n != len(want) {
		t.Errorf("a cross-partition count finds %d items, want %d", n, len(want))
	}
	ranges := checkRangesTile(t, c)

	t.Logf("soak %v: %s; %d 429s; %d items in %d partitions (%d splits); after the warm-up and at the end: "+
		"partitions %d -> %d, goroutines %d -> %d, heap in use %.1f -> %.1f MiB, "+
		"open files %d -> %d (of them Pebble's %d -> %d), RSS %.1f -> %.1f MiB",
		duration, l.opsSummary(), l.throttled.Load(), len(want), len(ranges), len(ranges)-1,
		base.partitions, end.partitions, base.goroutines, end.goroutines, mib(base.heapInuse), mib(end.heapInuse),
		base.fds, end.fds, base.dataFDs, end.dataFDs, mib(base.rss), mib(end.rss))
	checkFlat(t, base, end)
}

const (
	soakWorkers = 6
	soakKeys    = 64 // partition key values
	// soakThroughput is low enough for the load to be throttled now and then: a partition gets
	// its share of it, and the splits make the shares small.
	soakThroughput = 4000
)

// checkFlat compares the samples after the warm-up and at the end. Each was taken with the
// load paused and settled (soakProbe.settle): no request in flight, idle connections closed,
// a garbage collection just run.
func checkFlat(t *testing.T, base, end soakSample) {
	t.Helper()
	// Goroutines: the same background ones run at both times (the engine's and the HTTP
	// servers'), and one writer per partition, which the splits add to; beyond those, a few
	// may come and go (a listener's accept, a collection's helpers). A leak per request or
	// per split would add hundreds.
	if grown := end.goroutines - base.goroutines - (end.partitions - base.partitions); grown > 8 {
		t.Errorf("goroutines grew from %d to %d, %d more than the %d partitions added:\n%s",
			base.goroutines, end.goroutines, grown, end.partitions-base.partitions, end.goroutineDump)
	}
	// Heap in use after a GC: the data grew meanwhile, but the caches in the Go heap are
	// bounded (the row cache, the writers' maps); Pebble's block cache and memtables live
	// outside it. Twice the warm-up's and 32 MiB leave room for the bounded ones to fill.
	if end.heapInuse > 2*base.heapInuse+32<<20 {
		t.Errorf("heap in use grew from %.1f to %.1f MiB", mib(base.heapInuse), mib(end.heapInuse))
	}
	// Open files: Pebble keeps a descriptor on each table it reads (its table cache) and on
	// its log and manifest, so their number follows the tables compactions leave, not the
	// load; they are bounded by what the data directory holds, and none may name a deleted
	// file (a table removed by a compaction but never closed). Everything else (sockets,
	// pipes, the listener) must be as many as after the warm-up, within a few.
	if end.deleted > 0 {
		t.Errorf("%d open files name deleted files: %v", end.deleted, end.deletedNames)
	}
	if end.dataFDs > end.dataFiles {
		t.Errorf("%d files of the data directory open, which holds %d", end.dataFDs, end.dataFiles)
	}
	if other, baseOther := end.fds-end.dataFDs, base.fds-base.dataFDs; other > baseOther+8 {
		t.Errorf("open files other than Pebble's grew from %d to %d: %v", baseOther, other, end.otherNames)
	}
}

// soakItem is an item as its worker last wrote it.
type soakItem struct {
	pk     string
	v, pad int
}

type soakLoad struct {
	c       rawClient
	workers []*soakWorker
	// pause, held, stops every worker between two requests.
	pause     sync.RWMutex
	throttled atomic.Int64
	ops       [soakKinds]atomic.Int64
}

const (
	soakCreate = iota
	soakUpsert
	soakReplace
	soakDelete
	soakRead
	soakQueryOne
	soakQueryAll
	soakFeed
	soakKinds
)

var soakKindNames = [soakKinds]string{"creates", "upserts", "replaces", "deletes", "reads", "single-partition queries", "cross-partition queries", "change feed reads"}

func (l *soakLoad) opsSummary() string {
	var parts []string
	total := int64(0)
	for k := range soakKinds {
		n := l.ops[k].Load()
		total += n
		parts = append(parts, fmt.Sprintf("%d %s", n, soakKindNames[k]))
	}
	return fmt.Sprintf("%d operations (%s)", total, strings.Join(parts, ", "))
}

// soakWorker owns the items named w<n>-<i>: only it writes them, one request at a time, so
// what it reads back must be exactly what it last wrote.
type soakWorker struct {
	l     *soakLoad
	n     int
	rng   *rand.Rand
	items map[string]soakItem
	ids   []string // of items, for picking one; deleted ids are removed lazily
	next  int
}

func (w *soakWorker) run(t *testing.T, stop chan struct{}) {
	for errs := 0; errs < 5; {
		select {
		case <-stop:
			return
		default:
		}
		w.l.pause.RLock()
		err := w.step()
		w.l.pause.RUnlock()
		if err != nil {
			errs++
			t.Errorf("worker %d: %v", w.n, err)
		}
	}
}

// pick returns one of the worker's live items, if any.
func (w *soakWorker) pick() (string, soakItem, bool) {
	for len(w.ids) > 0 {
		i := w.rng.IntN(len(w.ids))
		id := w.ids[i]
		if it, ok := w.items[id]; ok {
			return id, it, true
		}
		w.ids[i] = w.ids[len(w.ids)-1]
		w.ids = w.ids[:len(w.ids)-1]
	}
	return "", soakItem{}, false
}

func (w *soakWorker) body(id string, it soakItem) []byte {
	return fmt.Appendf(nil, `{"id":%q,"pk":%q,"w":%d,"v":%d,"pad":%q}`, id, it.pk, w.n, it.v, strings.Repeat("x", it.pad))
}

func pkHeader(pk string) map[string]string {
	return map[string]string{"x-ms-documentdb-partitionkey": fmt.Sprintf("[%q]", pk)}
}

// step sends one request of a kind chosen at random and checks its answer.
func (w *soakWorker) step() error {
	r := w.rng.IntN(100)
	kind := soakRead
	switch {
	case r < 22:
		kind = soakCreate
	case r < 34:
		kind = soakUpsert
	case r < 42:
		kind = soakReplace
	case r < 47:
		kind = soakDelete
	case r < 72:
		kind = soakRead
	case r < 82:
		kind = soakQueryOne
	case r < 88:
		kind = soakQueryAll
	default:
		kind = soakFeed
	}
	id, cur, ok := w.pick()
	if !ok && kind != soakQueryAll {
		kind = soakCreate
	}
	fresh := soakItem{pk: fmt.Sprintf("k%02d", w.rng.IntN(soakKeys)), v: 1, pad: 300 + w.rng.IntN(1200)}
	w.l.ops[kind].Add(1)
	switch kind {
	case soakCreate, soakUpsert:
		method, want := "POST", 201
		hdr := pkHeader(fresh.pk)
		if kind == soakUpsert {
			hdr["x-ms-documentdb-is-upsert"] = "true"
			if w.rng.IntN(2) == 0 {
				fresh.pk, fresh.v, want = cur.pk, cur.v+1, 200 // of an item it has
				hdr = pkHeader(fresh.pk)
				hdr["x-ms-documentdb-is-upsert"] = "true"
				return w.write(method, "/dbs/db/colls/c/docs", id, fresh, hdr, want)
			}
		}
		w.next++
		return w.write(method, "/dbs/db/colls/c/docs", fmt.Sprintf("w%d-%d", w.n, w.next), fresh, hdr, want)
	case soakReplace:
		fresh.pk, fresh.v = cur.pk, cur.v+1
		return w.write("PUT", "/dbs/db/colls/c/docs/"+id, id, fresh, pkHeader(cur.pk), 200)
	case soakDelete:
		code, b, err := w.send("DELETE", "/dbs/db/colls/c/docs/"+id, nil, pkHeader(cur.pk))
		if err != nil || code != 204 {
			return fmt.Errorf("delete %s: %d %v %.300s", id, code, err, b)
		}
		delete(w.items, id)
	case soakRead:
		code, b, err := w.send("GET", "/dbs/db/colls/c/docs/"+id, nil, pkHeader(cur.pk))
		if err != nil || code != 200 {
			return fmt.Errorf("read %s: %d %v %.300s", id, code, err, b)
		}
		if m := userFields(b); m["v"] != float64(cur.v) || m["pad"] != strings.Repeat("x", cur.pad) {
			return fmt.Errorf("read %s: version %v, want %d: %.300s", id, m["v"], cur.v, b)
		}
	case soakQueryOne, soakQueryAll:
		pk := cur.pk
		if kind == soakQueryAll {
			pk = ""
		}
		want := 0
		for _, it := range w.items {
			if pk == "" || it.pk == pk {
				want++
			}
		}
		n, err := w.count(pk)
		if err != nil {
			return err
		}
		if n != want {
			return fmt.Errorf("counting worker %d's items in %q: %d, want %d", w.n, pk, n, want)
		}
	case soakFeed:
		return w.feed(cur.pk)
	}
	return nil
}

// write creates, upserts or replaces id with it and records it once acknowledged.
func (w *soakWorker) write(method, path, id string, it soakItem, hdr map[string]string, want int) error {
	code, b, err := w.send(method, path, w.body(id, it), hdr)
	if err != nil || code != want {
		return fmt.Errorf("%s %s: %d (want %d) %v %.300s", method, id, code, want, err, b)
	}
	if _, had := w.items[id]; !had {
		w.ids = append(w.ids, id)
	}
	w.items[id] = it
	return nil
}

// send sends a request, again after the time a 429 names, until it is not throttled.
func (w *soakWorker) send(method, path string, body []byte, hdr map[string]string) (int, []byte, error) {
	for {
		resp, err := w.l.c.send(method, path, body, hdr)
		if err != nil {
			return 0, nil, err
		}
		b, err := readBody(resp)
		if err != nil {
			return 0, nil, err
		}
		if resp.StatusCode != http.StatusTooManyRequests {
			return resp.StatusCode, b, nil
		}
		w.l.throttled.Add(1)
		ms, err := strconv.Atoi(resp.Header.Get("x-ms-retry-after-ms"))
		if err != nil || ms < 0 || ms > 60_000 {
			return 0, nil, fmt.Errorf("a 429 without a sound x-ms-retry-after-ms: %q", resp.Header.Get("x-ms-retry-after-ms"))
		}
		time.Sleep(time.Duration(ms) * time.Millisecond)
	}
}

// count counts the worker's items with a query: in one logical partition, or across the
// container when pk is "" (adding up the partial counts of its pages).
func (w *soakWorker) count(pk string) (int, error) {
	q := fmt.Appendf(nil, `{"query":"SELECT VALUE COUNT(1) FROM c WHERE c.w = @w","parameters":[{"name":"@w","value":%d}]}`, w.n)
	hdr := map[string]string{"Content-Type": "application/query+json", "x-ms-documentdb-isquery": "true"}
	if pk == "" {
		hdr["x-ms-documentdb-query-enablecrosspartition"] = "true"
	} else {
		hdr["x-ms-documentdb-partitionkey"] = fmt.Sprintf("[%q]", pk)
	}
	n, cont := 0, ""
	for {
		if cont != "" {
			hdr["x-ms-continuation"] = cont
		}
		resp, err := w.l.c.send("POST", "/dbs/db/colls/c/docs", q, hdr)
		if err != nil {
			return 0, err
		}
		b, err := readBody(resp)
		if err != nil {
			return 0, err
		}
		if resp.StatusCode == http.StatusTooManyRequests {
			w.l.throttled.Add(1)
			ms, _ := strconv.Atoi(resp.Header.Get("x-ms-retry-after-ms"))
			time.Sleep(time.Duration(ms) * time.Millisecond)
			continue // the same page again
		}
		var page struct{ Documents []int }
		if resp.StatusCode != 200 || json.Unmarshal(b, &page) != nil {
			return 0, fmt.Errorf("count query in %q: %d %.300s", pk, resp.StatusCode, b)
		}
		for _, d := range page.Documents {
			n += d
		}
		if cont = resp.Header.Get("x-ms-continuation"); cont == "" {
			return n, nil
		}
	}
}

// feed reads the latest-version change feed of logical partition pk from the beginning: it
// must hold each of the worker's items there once, at its last version, and no item deleted.
func (w *soakWorker) feed(pk string) error {
	got := map[string]int{}
	etag := ""
	for {
		hdr := pkHeader(pk)
		hdr["A-IM"], hdr["x-ms-max-item-count"] = "Incremental Feed", "100"
		if etag != "" {
			hdr["If-None-Match"] = etag
		}
		resp, err := w.l.c.send("GET", "/dbs/db/colls/c/docs", nil, hdr)
		if err != nil {
			return err
		}
		b, err := readBody(resp)
		if err != nil {
			return err
		}
		next := resp.Header.Get("etag")
		switch resp.StatusCode {
		case http.StatusTooManyRequests:
			w.l.throttled.Add(1)
			ms, _ := strconv.Atoi(resp.Header.Get("x-ms-retry-after-ms"))
			time.Sleep(time.Duration(ms) * time.Millisecond)
			continue
		case http.StatusNotModified:
			for id, it := range w.items {
				if it.pk == pk && got[id] != it.v {
					return fmt.Errorf("change feed of %s: %s at version %d, want %d", pk, id, got[id], it.v)
				}
				delete(got, id)
			}
			if len(got) > 0 {
				return fmt.Errorf("change feed of %s lists items worker %d does not have: %v", pk, w.n, got)
			}
			return nil
		}
		var page struct{ Documents []json.RawMessage }
		if resp.StatusCode != 200 || json.Unmarshal(b, &page) != nil || next == "" || next == etag {
			return fmt.Errorf("change feed of %s after %q: %d, etag %q: %.300s", pk, etag, resp.StatusCode, next, b)
		}
		for _, d := range page.Documents {
			m := userFields(d)
			if m["w"] != float64(w.n) {
				continue
			}
			id, _ := m["id"].(string)
			if _, dup := got[id]; dup {
				return fmt.Errorf("change feed of %s lists %s twice", pk, id)
			}
			v, _ := m["v"].(float64)
			got[id] = int(v)
		}
		etag = next
	}
}

// soakProbe samples the server process.
type soakProbe struct {
	t      *testing.T
	s      *server
	debug  string       // the profiler's base URL
	client *http.Client // without keep-alive, so that sampling leaves no connection open
}

type soakSample struct {
	goroutines, heapInuse, rss int64
	partitions                 int64 // the container's, each with its writer goroutine
	goroutineDump              string
	// fds are the process's open files; dataFDs those in the data directory, which holds
	// dataFiles files; deleted those naming a removed file.
	fds, dataFDs, dataFiles, deleted int
	deletedNames, otherNames         []string
}

// settle waits for the server to be idle and samples it: the load's idle connections are
// closed, and until the goroutines and open files are the same twice a second apart (at
// most 30 s; background work such as a compaction may still be ending) it forces a
// collection and samples again.
func (p *soakProbe) settle() soakSample {
	p.s.client.CloseIdleConnections()
	var last soakSample
	for i := 0; i < 30; i++ {
		time.Sleep(time.Second)
		cur := p.sample()
		if i > 0 && cur.goroutines == last.goroutines && cur.fds == last.fds && cur.deleted == 0 {
			return cur
		}
		last = cur
	}
	return last
}

func (p *soakProbe) sample() soakSample {
	t := p.t
	get := func(url string) []byte {
		resp, err := p.client.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		b, err := readBody(resp)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
		}
		return b
	}
	get(p.debug + "/debug/pprof/heap?gc=1") // runs a garbage collection first
	var smp soakSample
	sc := bufio.NewScanner(strings.NewReader(string(get(p.s.Endpoint + "metrics"))))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		if strings.HasPrefix(name, "partita_partition_items{") {
			smp.partitions++
		}
		f, err := strconv.ParseFloat(val, 64)
		if err != nil {
			continue
		}
		switch name {
		case "go_goroutines":
			smp.goroutines = int64(f)
		case "go_memstats_heap_inuse_bytes":
			smp.heapInuse = int64(f)
		case "process_resident_memory_bytes":
			smp.rss = int64(f)
		}
	}
	if smp.goroutines == 0 || smp.heapInuse == 0 {
		t.Fatal("/metrics lacks go_goroutines or go_memstats_heap_inuse_bytes")
	}
	smp.goroutineDump = string(get(p.debug + "/debug/pprof/goroutine?debug=1"))

	dir := fmt.Sprintf("/proc/%d/fd", p.s.cmd.Process.Pid)
	fds, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("listing the server's open files: %v", err)
	}
	data, err := filepath.EvalSymlinks(p.s.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join(dir, fd.Name()))
		if err != nil {
			continue // closed meanwhile
		}
		smp.fds++
		switch {
		case strings.HasSuffix(target, " (deleted)"):
			smp.deleted++
			smp.deletedNames = append(smp.deletedNames, target)
		case strings.HasPrefix(target, data+"/"):
			smp.dataFDs++
		default:
			smp.otherNames = append(smp.otherNames, target)
		}
	}
	filepath.WalkDir(data, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			smp.dataFiles++
		}
		return nil
	})
	return smp
}

func readBody(resp *http.Response) ([]byte, error) {
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

func anyKey[V any](m map[string]V) string {
	for k := range m {
		return k
	}
	return ""
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
