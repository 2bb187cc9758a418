package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// SIGKILL under a mix of creates, replaces, upserts and deletes loses no acknowledged write
// and brings back no deleted item, over three kills and restarts on one data directory.
func TestCrashLosesNoAcknowledgedWrite(t *testing.T) {
	runCrashCycles(t, crashConfig{padLen: 100, newPct: 35})
}

// The same while partitions split repeatedly (1 MiB partitions, items of about 1 KB): the kill
// comes once a partition is seen over the split size after a second of load, so while a split
// is pending or running (or, on a machine too slow to fill one, after 6 seconds).
// After each restart the container's ranges still tile the EPK space and a cross-partition
// count finds exactly the items present.
func TestCrashDuringSplitsLosesNoAcknowledgedWrite(t *testing.T) {
	runCrashCycles(t, crashConfig{padLen: 1000, newPct: 80, maxPartitionBytes: 1 << 20})
}

type crashConfig struct {
	padLen            int   // bytes of padding in every item
	newPct            int   // percent of operations that create an item under a new id
	maxPartitionBytes int64 // --partition-max-bytes; 0 for the default (no size splits)
	// check, when set, runs after each restart's own checks, with the load's writes settled:
	// each item holds its acknowledged state or, for a write in doubt, that write's.
	check func(t *testing.T, c rawClient, l *crashLoad)
}

const (
	crashCycles  = 3
	crashWriters = 16
	crashKeys    = 50 // partition key values
)

func runCrashCycles(t *testing.T, cfg crashConfig) {
	dir := t.TempDir()
	args := []string{"--rate-limit=false"}
	if cfg.maxPartitionBytes > 0 {
		args = append(args, "--partition-max-bytes", strconv.FormatInt(cfg.maxPartitionBytes, 10))
	}
	s := startCrashServer(t, dir, args)
	c := rawClient{s: s, key: emulatorKey, now: time.Now}
	if code, _, b := c.do(t, "POST", "/dbs", []byte(`{"id":"db"}`), nil); code != 201 {
		t.Fatalf("create database: %d %s", code, b)
	}
	if code, _, b := c.do(t, "POST", "/dbs/db/colls", []byte(`{"id":"c","partitionKey":{"paths":["/pk"],"version":2}}`),
		map[string]string{"x-ms-offer-throughput": "24000"}); code != 201 {
		t.Fatalf("create container: %d %s", code, b)
	}
	load := newCrashLoad(cfg)
	for cycle := 1; cycle <= crashCycles; cycle++ {
		var killed atomic.Bool
		var acked, doubtful atomic.Int64
		started := time.Now()
		wg := load.start(t, c, &killed, &acked, &doubtful)

		duringSplit := false
		if cfg.maxPartitionBytes > 0 {
			duringSplit = waitForSplit(c, cfg.maxPartitionBytes, started.Add(time.Second), started.Add(6*time.Second))
		} else {
			time.Sleep(time.Second + rand.N(time.Second))
		}
		killed.Store(true)
		if err := s.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		s.cmd.Wait() // "signal: killed"
		wg.Wait()
		s.client.CloseIdleConnections()
		ranBefore := time.Since(started)
		if t.Failed() {
			return
		}
		if acked.Load() == 0 {
			t.Fatalf("cycle %d: no write was acknowledged before the kill", cycle)
		}

		restarted := time.Now()
		s = startCrashServer(t, dir, args)
		c = rawClient{s: s, key: emulatorKey, now: time.Now}
		v := load.verify(t, c)
		ranges := len(checkRangesTile(t, c))
		if n := countItems(t, c); n != v.present {
			t.Errorf("cycle %d: SELECT VALUE COUNT(1) FROM c counts %d items, the feed holds %d", cycle, n, v.present)
		}
		if cfg.check != nil {
			cfg.check(t, c, load)
		}
		t.Logf("cycle %d: %d writes acknowledged in %v, killed (a partition over the split size: %v), %d in doubt "+
			"(%d had happened); after the restart %d items present, %d absent (deleted or never created), %d ranges; restart and checks took %v",
			cycle, acked.Load(), ranBefore.Round(time.Millisecond), duringSplit, doubtful.Load(), v.doubtNew,
			v.present, v.absent, ranges, time.Since(restarted).Round(time.Millisecond))
		if t.Failed() {
			return
		}
	}
}

// startCrashServer starts a plain-HTTP server with a client that keeps a connection per
// writer open, so that 16 busy writers do not churn through ephemeral ports.
func startCrashServer(t *testing.T, dir string, args []string) *server {
	t.Helper()
	s := startServerIn(t, dir, false, args...)
	s.client = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 2 * crashWriters}}
	return s
}

// crashItem is what its writer knows of one item: its last acknowledged state, and the state
// of a write that got no answer, which may or may not have happened.
type crashItem struct {
	pk          string
	exists      bool // acknowledged: present with version v, or deleted (or never created)
	v           int
	doubt       bool
	doubtExists bool
	doubtV      int
	writes      []crashWrite // every write made to the item, in order
}

// crashWrite is one write to an item: the version it wrote (a delete takes a version number
// too), whether the item existed before and after it, and whether it got no answer. A write in
// doubt is always its item's last; crashLoad.verify does not settle these, a check does.
type crashWrite struct {
	v               int
	existed, exists bool
	doubt           bool
}

// crashWriter owns its items (ids w<writer>-<n>), so no two writers touch one item.
type crashWriter struct {
	w     int
	rng   *rand.Rand
	ids   []string
	items map[string]*crashItem
}

type crashLoad struct {
	cfg     crashConfig
	writers []*crashWriter
}

func newCrashLoad(cfg crashConfig) *crashLoad {
	l := &crashLoad{cfg: cfg}
	for w := range crashWriters {
		l.writers = append(l.writers, &crashWriter{w: w, rng: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(w))),
			items: map[string]*crashItem{}})
	}
	return l
}

// crashBody is version v of an item; its padding names the item and version too, so that
// content from another item or version cannot pass for it.
func (l *crashLoad) crashBody(id, pk string, w, v int) []byte {
	var pad strings.Builder
	for pad.Len() < l.cfg.padLen {
		fmt.Fprintf(&pad, "%s/%d;", id, v)
	}
	return fmt.Appendf(nil, `{"id":%q,"pk":%q,"w":%d,"v":%d,"pad":%q}`, id, pk, w, v, pad.String()[:l.cfg.padLen])
}

// start runs the writers until each one's connection breaks (the kill).
func (l *crashLoad) start(t *testing.T, c rawClient, killed *atomic.Bool, acked, doubtful *atomic.Int64) *sync.WaitGroup {
	var wg sync.WaitGroup
	for _, wr := range l.writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				status, err := l.step(c, wr)
				if err != nil {
					doubtful.Add(1)
					if !killed.Load() {
						t.Errorf("writer %d lost its connection before the kill: %v", wr.w, err)
					}
					return
				}
				if status != "" {
					t.Errorf("writer %d: %s", wr.w, status)
					return
				}
				acked.Add(1)
			}
		}()
	}
	return &wg
}

// step makes one write and records its outcome. It returns an error when no answer came (the
// write is then in doubt), and a description of any unexpected answer.
func (l *crashLoad) step(c rawClient, wr *crashWriter) (string, error) {
	var id string
	if len(wr.ids) == 0 || wr.rng.IntN(100) < l.cfg.newPct {
		id = fmt.Sprintf("w%d-%d", wr.w, len(wr.ids))
		wr.ids = append(wr.ids, id)
		wr.items[id] = &crashItem{pk: fmt.Sprintf("k%d", wr.rng.IntN(crashKeys)), v: -1}
	} else {
		id = wr.ids[wr.rng.IntN(len(wr.ids))]
	}
	it := wr.items[id]
	hdr := map[string]string{"x-ms-documentdb-partitionkey": fmt.Sprintf("[%q]", it.pk), "Prefer": "return=minimal"}
	body := l.crashBody(id, it.pk, wr.w, it.v+1)
	var method, path, op string
	var want int
	next := true // whether the item exists after the write
	switch r := wr.rng.IntN(10); {
	case !it.exists && r < 5:
		method, path, want, op = "POST", "/dbs/db/colls/c/docs", 201, "create"
	case !it.exists:
		method, path, want, op = "POST", "/dbs/db/colls/c/docs", 201, "upsert (creating)"
		hdr["x-ms-documentdb-is-upsert"] = "true"
	case r < 4:
		method, path, want, op = "PUT", "/dbs/db/colls/c/docs/"+id, 200, "replace"
	case r < 7:
		method, path, want, op = "POST", "/dbs/db/colls/c/docs", 200, "upsert (replacing)"
		hdr["x-ms-documentdb-is-upsert"] = "true"
	default:
		method, path, want, op, body, next = "DELETE", "/dbs/db/colls/c/docs/"+id, 204, "delete", nil, false
	}
	it.doubt, it.doubtExists, it.doubtV = true, next, it.v+1
	it.writes = append(it.writes, crashWrite{v: it.v + 1, existed: it.exists, exists: next, doubt: true})
	resp, err := c.send(method, path, body, hdr)
	if err != nil {
		return "", err // no answer: the write stays in doubt
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	it.doubt = false
	if resp.StatusCode != want {
		return fmt.Sprintf("%s of %s (acknowledged state: exists %v, version %d): %d, want %d: %s",
			op, id, it.exists, it.v, resp.StatusCode, want, b), nil
	}
	it.exists, it.v = next, it.v+1
	it.writes[len(it.writes)-1].doubt = false
	return "", nil
}

type crashVerified struct {
	present, absent, doubtNew int
}

// verify checks the restarted server holds exactly the acknowledged state of every item (or,
// for an item whose last write got no answer, that write's state), through the read feed and
// through point reads, and settles every item in doubt to what the server holds.
func (l *crashLoad) verify(t *testing.T, c rawClient) crashVerified {
	t.Helper()
	feed := readAllItems(t, c)
	var v crashVerified
	bad := 0
	fail := func(format string, args ...any) {
		if bad++; bad <= 20 {
			t.Errorf(format, args...)
		}
	}
	for _, wr := range l.writers {
		for _, id := range wr.ids {
			it := wr.items[id]
			got, found := feed[id]
			delete(feed, id)
			holds := func(exists bool, ver int) bool {
				if !exists {
					return !found
				}
				return found && reflect.DeepEqual(got, userFields(l.crashBody(id, it.pk, wr.w, ver)))
			}
			switch {
			case holds(it.exists, it.v):
			case it.doubt && holds(it.doubtExists, it.doubtV):
				it.exists, it.v = it.doubtExists, it.doubtV
				v.doubtNew++
			default:
				state := fmt.Sprintf("version %d", it.v)
				if !it.exists {
					state = "deleted"
				}
				if it.doubt {
					state += fmt.Sprintf(" (or, in doubt, exists %v version %d)", it.doubtExists, it.doubtV)
				}
				if found {
					held := fmt.Sprintf("version %v", got["v"])
					if ver, ok := got["v"].(float64); !ok || !reflect.DeepEqual(got, userFields(l.crashBody(id, it.pk, wr.w, int(ver)))) {
						held = fmt.Sprintf("%.200v", got)
					}
					fail("item %s should be %s, the server holds %s", id, state, held)
				} else {
					fail("item %s should be %s, the server lost it", id, state)
				}
			}
			it.doubt = false
			if found {
				v.present++
			} else {
				v.absent++
			}
		}
	}
	for id, got := range feed {
		fail("the server holds %s, which no write made: %v", id, got)
	}
	if bad > 0 {
		t.Errorf("%d items in the wrong state after the restart", bad)
		return v
	}

	// Point reads agree with the feed.
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, wr := range l.writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, id := range wr.ids {
				it := wr.items[id]
				resp, err := c.send("GET", "/dbs/db/colls/c/docs/"+id, nil, map[string]string{"x-ms-documentdb-partitionkey": fmt.Sprintf("[%q]", it.pk)})
				if err != nil {
					t.Errorf("read %s: %v", id, err)
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				ok := resp.StatusCode == 404 && !it.exists ||
					resp.StatusCode == 200 && it.exists && reflect.DeepEqual(userFields(b), userFields(l.crashBody(id, it.pk, wr.w, it.v)))
				if !ok {
					mu.Lock()
					fail("point read of %s (exists %v, version %d): %d %.300s", id, it.exists, it.v, resp.StatusCode, b)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return v
}

// userFields is an item's own fields, without the system properties (_rid, _etag, _ts, ...).
func userFields(b []byte) map[string]any {
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return map[string]any{"unparsable": string(b)}
	}
	for k := range m {
		if strings.HasPrefix(k, "_") {
			delete(m, k)
		}
	}
	return m
}

// readAllItems reads the container's whole read feed, a page at a time: id -> user fields.
func readAllItems(t *testing.T, c rawClient) map[string]map[string]any {
	t.Helper()
	items := map[string]map[string]any{}
	cont := ""
	for {
		hdr := map[string]string{"x-ms-max-item-count": "1000"}
		if cont != "" {
			hdr["x-ms-continuation"] = cont
		}
		code, h, b := c.do(t, "GET", "/dbs/db/colls/c/docs", nil, hdr)
		if code != 200 {
			t.Fatalf("read feed: %d %s", code, b)
		}
		var page struct{ Documents []json.RawMessage }
		if err := json.Unmarshal(b, &page); err != nil {
			t.Fatalf("read feed page: %v", err)
		}
		for _, d := range page.Documents {
			m := userFields(d)
			id, _ := m["id"].(string)
			if _, dup := items[id]; dup {
				t.Errorf("the read feed returns %q twice", id)
			}
			items[id] = m
		}
		if cont = h.Get("x-ms-continuation"); cont == "" {
			return items
		}
	}
}

// countItems runs SELECT VALUE COUNT(1) FROM c across the container.
func countItems(t *testing.T, c rawClient) int {
	t.Helper()
	n, cont := 0, ""
	for {
		hdr := map[string]string{"Content-Type": "application/query+json", "x-ms-documentdb-isquery": "true",
			"x-ms-documentdb-query-enablecrosspartition": "true"}
		if cont != "" {
			hdr["x-ms-continuation"] = cont
		}
		code, h, b := c.do(t, "POST", "/dbs/db/colls/c/docs", []byte(`{"query":"SELECT VALUE COUNT(1) FROM c"}`), hdr)
		if code != 200 {
			t.Fatalf("count query: %d %s", code, b)
		}
		var page struct{ Documents []int }
		if err := json.Unmarshal(b, &page); err != nil {
			t.Fatalf("count query: %v: %s", err, b)
		}
		for _, d := range page.Documents {
			n += d
		}
		if cont = h.Get("x-ms-continuation"); cont == "" {
			return n
		}
	}
}

// pkRange is a partition key range as GET .../pkranges lists it.
type pkRange struct {
	ID           string   `json:"id"`
	MinInclusive string   `json:"minInclusive"`
	MaxExclusive string   `json:"maxExclusive"`
	Parents      []string `json:"parents"` // its ancestors, oldest first
}

// checkRangesTile checks the partition key ranges cover the EPK space, from "" to FF, without
// gap or overlap, and returns them in EPK order.
func checkRangesTile(t *testing.T, c rawClient) []pkRange {
	t.Helper()
	code, _, b := c.do(t, "GET", "/dbs/db/colls/c/pkranges", nil, nil)
	if code != 200 {
		t.Fatalf("pkranges: %d %s", code, b)
	}
	var feed struct{ PartitionKeyRanges []pkRange }
	if err := json.Unmarshal(b, &feed); err != nil || len(feed.PartitionKeyRanges) == 0 {
		t.Fatalf("pkranges: %v: %s", err, b)
	}
	rs := feed.PartitionKeyRanges
	sort.Slice(rs, func(i, j int) bool { return rs[i].MinInclusive < rs[j].MinInclusive })
	want := ""
	ids := map[string]bool{}
	for _, r := range rs {
		if r.MinInclusive != want || r.MaxExclusive <= r.MinInclusive {
			t.Fatalf("the ranges do not tile the EPK space at %q (range %s is [%q, %q)): %s", want, r.ID, r.MinInclusive, r.MaxExclusive, b)
		}
		if ids[r.ID] {
			t.Fatalf("range id %s twice: %s", r.ID, b)
		}
		ids[r.ID] = true
		want = r.MaxExclusive
	}
	if want != "FF" {
		t.Fatalf("the last range ends at %q, want FF: %s", want, b)
	}
	for _, r := range rs {
		for _, p := range r.Parents {
			if ids[p] {
				t.Fatalf("range %s is live and also the parent of range %s: %s", p, r.ID, b)
			}
		}
	}
	return rs
}

// waitForSplit polls the partitions' sizes from notBefore until one is over the split size,
// which means a split of the container is pending or under way, or until the deadline. It
// reports whether it saw one.
func waitForSplit(c rawClient, limit int64, notBefore, deadline time.Time) bool {
	time.Sleep(time.Until(notBefore))
	for time.Now().Before(deadline) {
		resp, err := c.s.client.Get(c.s.Endpoint + "metrics")
		if err != nil {
			return false
		}
		over := false
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := sc.Bytes()
			if !bytes.HasPrefix(line, []byte("partita_partition_bytes{")) || !bytes.Contains(line, []byte(`container="c"`)) {
				continue
			}
			f, err := strconv.ParseFloat(string(line[bytes.LastIndexByte(line, ' ')+1:]), 64)
			if err == nil && f > float64(limit) {
				over = true
			}
		}
		resp.Body.Close()
		if over {
			return true
		}
		time.Sleep(2 * time.Millisecond)
	}
	return false
}
