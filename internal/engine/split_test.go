package engine

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/query"
)

// checkTiling verifies the container's partitions tile the EPK space and name their parents.
func checkTiling(t *testing.T, e *Engine, c *Container) ContainerInfo {
	t.Helper()
	info, err := e.ContainerInfo("db", c.rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := epk.Min
	for _, p := range info.Partitions {
		if p.Range.Min != want {
			t.Fatalf("ranges do not tile: %v after %s", p.Range, want.Hex())
		}
		want = p.Range.Max
	}
	if want != epk.Max {
		t.Fatalf("the last range ends at %s", want.Hex())
	}
	return info
}

// A container growing past the split size splits repeatedly while writers and readers run;
// at the end every item is readable exactly once, through point reads, scans and the index.
func TestSplitWhileWriting(t *testing.T) {
	e, c := newContainer(t, Options{MaxPartitionBytes: 256 << 10}, ContainerSpec{})
	pad := strings.Repeat("x", 900)
	const writers, each = 8, 250
	var wg sync.WaitGroup
	var readErrors atomic.Int64
	stop := make(chan struct{})
	go func() { // a reader that must never fail during splits
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := c.ReadItem(key(fmt.Sprintf("k%d", i%97)), "missing"); !errors.Is(err, fault.NotFound) {
				readErrors.Add(1)
			}
		}
	}()
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				id := fmt.Sprintf("w%d-%d", w, i)
				if _, err := c.CreateItem([]byte(fmt.Sprintf(`{"id":%q,"pk":"k%d","n":%d,"pad":%q}`, id, (w*each+i)%97, i, pad)), ItemOptions{}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	// Wait for background splits to settle.
	for deadline := time.Now().Add(10 * time.Second); c.splitting.Load() && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if readErrors.Load() > 0 {
		t.Fatalf("%d reads failed during splits", readErrors.Load())
	}
	info := checkTiling(t, e, c)
	if len(info.Partitions) < 4 {
		t.Fatalf("%d partitions after writing ~2 MB with a 256 KB split size", len(info.Partitions))
	}
	children := 0
	total := int64(0)
	for _, p := range info.Partitions {
		if len(p.Parents) > 0 {
			children++
		}
		total += p.Items
	}
	if children != len(info.Partitions) || total != writers*each {
		t.Fatalf("partitions %+v: %d with parents, %d items", info.Partitions, children, total)
	}
	seen := map[string]int{}
	for _, p := range c.partitions() {
		p.Scan([]epk.Range{epk.All}, 0, func(d partitionDoc) bool { seen[d.ID()]++; return true })
	}
	if len(seen) != writers*each {
		t.Fatalf("scans found %d items, want %d", len(seen), writers*each)
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("%s seen %d times", id, n)
		}
	}
	for w := range writers {
		for i := range each {
			id := fmt.Sprintf("w%d-%d", w, i)
			if _, err := c.ReadItem(key(fmt.Sprintf("k%d", (w*each+i)%97)), id); err != nil {
				t.Fatalf("read %s: %v", id, err)
			}
		}
	}
	// The children's indexes hold exactly their items.
	p, _ := query.Prepare("SELECT VALUE COUNT(1) FROM c WHERE c.n >= 0")
	res, err := c.Query(p, epk.All, query.Options{})
	if err != nil || res.Results[0].Num() != writers*each || res.Stats.ItemsLoaded != writers*each {
		t.Fatalf("count through the index after splits: %v (%d loaded) %v", res.Results, res.Stats.ItemsLoaded, err)
	}
	// Writes continue after the splits, with LSNs that keep growing.
	before := c.partitions()[0].Stats().LSN
	r := mustCreate(t, c, []byte(`{"id":"after","pk":"k0"}`))
	if r.LSN <= before && c.PartitionID(c.scheme.Hash(key("k0"))) == c.partitions()[0].ID() {
		t.Fatal("LSN went back after a split")
	}
}

func TestSplitForThroughput(t *testing.T) {
	e, c := newContainer(t, Options{}, ContainerSpec{Throughput: &Throughput{Manual: 10000}})
	for i := range 300 {
		mustCreate(t, c, item(fmt.Sprint(i), fmt.Sprintf("k%d", i), ""))
	}
	if n := len(c.partitions()); n != 2 {
		t.Fatalf("10,000 RU/s: %d partitions, want 2", n)
	}
	offers := e.Offers()
	// Beyond Cosmos's quota: refused, rather than split into 100,000 partitions.
	if _, err := e.ReplaceOffer(offers[0].ID, OfferReplace{Throughput: Throughput{Manual: 1000000000}}); !errors.Is(err, fault.BadRequest) {
		t.Fatalf("a billion RU/s: %v, want 400", err)
	}
	o, err := e.ReplaceOffer(offers[0].ID, OfferReplace{Throughput: Throughput{Manual: 40000}})
	if err != nil {
		t.Fatal(err)
	}
	// The answer is the offer as it stands after the splits, which change its etag.
	if now, _ := e.Offer(o.ID); now.ETag() != o.ETag() {
		t.Fatalf("answered the etag %s, the offer has %s", o.ETag(), now.ETag())
	}
	info := checkTiling(t, e, c)
	if len(info.Partitions) != 4 {
		t.Fatalf("40,000 RU/s: %d partitions, want 4", len(info.Partitions))
	}
	for _, p := range c.partitions() {
		if s := p.Budget().Stats(); s.PerSecond != 10000 {
			t.Fatalf("partition budget %v, want 10,000 RU/s", s.PerSecond)
		}
	}
	for i := range 300 {
		if _, err := c.ReadItem(key(fmt.Sprintf("k%d", i)), fmt.Sprint(i)); err != nil {
			t.Fatalf("item %d after the split: %v", i, err)
		}
	}
	// Splits survive a restart.
	dir := e.opts.Dir
	e.Close()
	e2 := openEngine(t, dir, Options{})
	defer e2.Close()
	if info, _ := e2.ContainerInfo("db", "c"); len(info.Partitions) != 4 {
		t.Fatalf("after restart: %d partitions", len(info.Partitions))
	}
	c2, _ := e2.Container("db", "c")
	if _, err := c2.ReadItem(key("k7"), "7"); err != nil {
		t.Fatal(err)
	}
	if _, err := c2.PartitionRange(0); !errors.Is(err, fault.Gone) {
		t.Fatalf("a split range's id: %v, want 410", err)
	}
}

// Writes that change indexed values while a split copies the index must be reflected in the
// children's index: after the split, index lookups find exactly what a full scan finds.
func TestSplitKeepsIndexExactUnderWrites(t *testing.T) {
	e, c := newContainer(t, Options{}, ContainerSpec{Throughput: &Throughput{Manual: 10000}})
	const n = 3000
	for i := range n {
		mustCreate(t, c, []byte(fmt.Sprintf(`{"id":"%d","pk":"k%d","n":%d}`, i, i%300, i)))
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for round := 1; ; round++ {
			for i := 0; i < n; i += 7 {
				select {
				case <-stop:
					return
				default:
				}
				pk := fmt.Sprintf("k%d", i%300)
				if i%3 == 0 {
					c.DeleteItem(key(pk), fmt.Sprint(i), ItemOptions{})
					c.UpsertItem([]byte(fmt.Sprintf(`{"id":"%d","pk":%q,"n":%d}`, i, pk, -round)), ItemOptions{})
				} else {
					c.UpsertItem([]byte(fmt.Sprintf(`{"id":"%d","pk":%q,"n":%d}`, i, pk, n+round*n+i)), ItemOptions{})
				}
			}
		}
	}()
	time.Sleep(20 * time.Millisecond)
	if _, err := e.ReplaceOffer(e.Offers()[0].ID, OfferReplace{Throughput: Throughput{Manual: 80000}}); err != nil {
		t.Fatal(err)
	}
	close(stop)
	<-done
	if got := len(c.partitions()); got != 8 {
		t.Fatalf("%d partitions, want 8", got)
	}
	for _, sql := range []string{
		"SELECT VALUE c.id FROM c WHERE c.n >= 0 ORDER BY c.id",
		"SELECT VALUE c.id FROM c WHERE c.n < 0 ORDER BY c.id",
		"SELECT VALUE c.id FROM c WHERE c.n > 3000 ORDER BY c.id",
		"SELECT VALUE COUNT(1) FROM c WHERE c.n BETWEEN 100 AND 200",
	} {
		p, _ := query.Prepare(sql)
		withIndex, err := c.Query(p, epk.All, query.Options{MaxItems: 10000})
		if err != nil {
			t.Fatal(err)
		}
		scan, _ := c.Query(p, epk.All, query.Options{MaxItems: 10000, NoIndex: true})
		if fmt.Sprint(withIndex.Results) != fmt.Sprint(scan.Results) {
			t.Fatalf("%s: the index finds %d results, a scan %d", sql, len(withIndex.Results), len(scan.Results))
		}
	}
}

// Every write goes through the one pipeline, so a patch that grows items splits a partition
// just as a create would (it did not when each operation wrote its own steps).
func TestPatchThatGrowsItemsSplits(t *testing.T) {
	e, c := newContainer(t, Options{MaxPartitionBytes: 64 << 10}, ContainerSpec{})
	for i := range 64 {
		mustCreate(t, c, item(fmt.Sprint(i), fmt.Sprintf("k%d", i), ""))
	}
	if n := len(c.partitions()); n != 1 {
		t.Fatalf("%d partitions before the patches, want 1", n)
	}
	pad := strings.Repeat("x", 2000)
	for i := range 64 {
		patch := Patch{Ops: []document.PatchOp{{Op: "add", Path: "/pad", Value: []byte(strconv.Quote(pad))}}}
		if _, err := c.PatchItem(key(fmt.Sprintf("k%d", i)), fmt.Sprint(i), patch, ItemOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(10 * time.Second); c.splitting.Load() && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if info := checkTiling(t, e, c); len(info.Partitions) < 2 {
		t.Fatalf("%d partitions after patches grew the container to ~130 KB with a 64 KB split size", len(info.Partitions))
	}
}

// Close while the background split loop has a partition over the size limit: the split it
// tries sees the engine closing and gives up, and the loop must end with it. It once took the
// give-up for a success and tried the same split again forever, so Close, which waits for the
// loop, never returned (found by the power-loss tests, which close engines mid-split).
func TestCloseEndsTheSplitLoop(t *testing.T) {
	e := openEngine(t, t.TempDir(), Options{MaxPartitionBytes: 4 << 10})
	if _, err := e.CreateDatabase("db", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.CreateContainer("db", ContainerSpec{ID: "c", PartitionKey: PartitionKeyDef{Paths: []string{"/pk"}, Version: 2}}); err != nil {
		t.Fatal(err)
	}
	c, _ := e.Container("db", "c")
	c.splitOne.Lock() // the loop's split waits here until the engine is closing
	pad := strings.Repeat("x", 1000)
	for i := range 8 {
		mustCreate(t, c, item(fmt.Sprint(i), fmt.Sprintf("k%d", i), fmt.Sprintf(`,"pad":%q`, pad)))
	}
	if !c.splitting.Load() {
		t.Fatal("no split started past the size limit")
	}
	closed := make(chan error, 1)
	go func() { closed <- e.Close() }()
	for {
		e.mu.RLock()
		closing := e.closed
		e.mu.RUnlock()
		if closing {
			break
		}
		time.Sleep(time.Millisecond)
	}
	c.splitOne.Unlock()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second): // it takes microseconds; a hang is the failure
		t.Fatal("Close did not return: the split loop keeps retrying a split the closing engine refuses")
	}
}

// A version 1 container raised from 400 to 40,000 RU/s splits at the middle of its keys'
// hashes, so that its four partitions share the items, as a version 2 container's do (its
// splits at the middle of the byte space left the items all in one partition).
func TestThroughputSplitOfAVersion1Container(t *testing.T) {
	e, c := newContainer(t, Options{}, ContainerSpec{PartitionKey: PartitionKeyDef{Paths: []string{"/pk"}, Version: 1}, Throughput: &Throughput{Manual: 400}})
	for i := range 2000 {
		mustCreate(t, c, item(fmt.Sprint(i), fmt.Sprint("k", i), ""))
	}
	if _, err := e.ReplaceOffer(e.Offers()[0].ID, OfferReplace{Throughput: Throughput{Manual: 40000}}); err != nil {
		t.Fatal(err)
	}
	info, err := e.ContainerInfo("db", "c")
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Partitions) != 4 {
		t.Fatalf("%d partitions at 40,000 RU/s, want 4", len(info.Partitions))
	}
	for _, p := range info.Partitions {
		if p.Items < 350 || p.Items > 650 {
			t.Fatalf("partition %d holds %d of 2000 items; the partitions: %+v", p.ID, p.Items, info.Partitions)
		}
	}
}
