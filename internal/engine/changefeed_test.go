package engine

import (
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/epk"
)

// allChanges reads the whole all-versions feed of c's one partition as "op:id@lsn" strings.
func allChanges(t *testing.T, c *Container) []string {
	t.Helper()
	var out []string
	q := FeedQuery{Range: epk.All, AllVersions: true, Max: 3}
	for {
		page, err := c.ChangeFeed(q)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Changes) == 0 {
			return out
		}
		for _, ch := range page.Changes {
			s := fmt.Sprintf("%s:%s@%d", ch.Op, ch.ID, ch.LSN)
			if ch.JSON == nil && ch.Op.String() != "delete" {
				s += "(no image)"
			}
			out = append(out, s)
		}
		q.Start = FeedStart{After: page.Through, HasAfter: true}
	}
}

// Versions replaced while the server kept no images (retention 0) have none when it later
// keeps them; the all-versions feed still lists every change, none skipped.
func TestChangeFeedWithoutImages(t *testing.T) {
	dir := t.TempDir()
	e := openEngine(t, dir, Options{})
	if _, err := e.CreateDatabase("db", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.CreateContainer("db", ContainerSpec{ID: "c", PartitionKey: PartitionKeyDef{Paths: []string{"/pk"}, Version: 2}}); err != nil {
		t.Fatal(err)
	}
	c, _ := e.Container("db", "c")
	for _, id := range []string{"a", "b", "a", "b"} {
		if _, err := c.UpsertItem(item(id, "p", ""), ItemOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.ChangeFeed(FeedQuery{Range: epk.All, AllVersions: true}); err == nil {
		t.Fatal("all-versions feed served with retention 0")
	}
	e.Close()

	e = openEngine(t, dir, Options{ChangeFeedRetention: time.Hour})
	defer e.Close()
	c, _ = e.Container("db", "c")
	if _, err := c.UpsertItem(item("a", "p", ""), ItemOptions{}); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(allChanges(t, c), " ")
	want := "create:a@1(no image) create:b@2(no image) replace:a@3 replace:b@4 replace:a@5"
	if got != want {
		t.Fatalf("feed %s\nwant %s", got, want)
	}
}

// Retention runs beside writers and readers: it removes only versions that are no longer
// current, so the latest-version feed from the start always holds every item once.
func TestChangeFeedPurgeBesideWrites(t *testing.T) {
	e, c := newContainer(t, Options{ChangeFeedRetention: time.Hour}, ContainerSpec{})
	const items = 200
	for id := range items {
		if _, err := c.UpsertItem(item(fmt.Sprint(id), fmt.Sprint("k", id), ""), ItemOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				id := fmt.Sprint((n*4 + w) % items)
				if _, err := c.UpsertItem(item(id, "k"+id, fmt.Sprintf(`,"n":%d`, n)), ItemOptions{}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for range 20 {
		e.purgeLogsOnce(time.Now().Add(2 * time.Hour))
		seen := map[string]int{}
		q := FeedQuery{Range: epk.All}
		for {
			page, err := c.ChangeFeed(q)
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Changes) == 0 {
				break
			}
			for _, ch := range page.Changes {
				seen[ch.ID]++
			}
			q.Start = FeedStart{After: page.Through, HasAfter: true}
		}
		// Items written while the feed is read may come twice (at their old and new place),
		// never zero times.
		for id := range items {
			if seen[fmt.Sprint(id)] == 0 {
				close(stop)
				wg.Wait()
				t.Fatalf("item %d missing from the latest-version feed", id)
			}
		}
	}
	close(stop)
	wg.Wait()
	e.purgeLogsOnce(time.Now().Add(2 * time.Hour))
	seen := map[string]int{}
	page, err := c.ChangeFeed(FeedQuery{Range: epk.All, Max: 10 * items})
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range page.Changes {
		seen[ch.ID]++
	}
	if len(seen) != items || len(page.Changes) != items {
		t.Fatalf("after retention the latest-version feed holds %d changes of %d items, want %d once each", len(page.Changes), len(seen), items)
	}
	if _, err := c.ChangeFeed(FeedQuery{Range: epk.All, AllVersions: true}); err == nil {
		t.Fatal("an all-versions read from the start after retention purged changes was served")
	}
}

// A forged etag at the largest LSN reads nothing: the position after it must not wrap around
// to the start of the log.
func TestChangeFeedAfterLargestLSN(t *testing.T) {
	_, c := newContainer(t, Options{ChangeFeedRetention: time.Hour}, ContainerSpec{})
	if _, err := c.UpsertItem(item("a", "p", ""), ItemOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, all := range []bool{false, true} {
		page, err := c.ChangeFeed(FeedQuery{Range: epk.All, AllVersions: all, Start: FeedStart{After: math.MaxUint64, HasAfter: true}})
		if err != nil || len(page.Changes) != 0 || page.Through != math.MaxUint64 {
			t.Fatalf("all=%v: %d changes through %d, %v; want none", all, len(page.Changes), page.Through, err)
		}
	}
}
