package engine

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/ru"
)

// Expiry is computed from stored data: after a restart the default is still set, an item
// written before expires on time, and the reaper's delete is logged as an expiry.
func TestTTLSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	clock := newFakeClock()
	opts := Options{Now: clock.Now, ChangeFeedRetention: time.Hour}
	e := openEngine(t, dir, opts)
	if _, err := e.CreateDatabase("db", nil); err != nil {
		t.Fatal(err)
	}
	ttl := int64(10)
	if _, err := e.CreateContainer("db", ContainerSpec{ID: "c", PartitionKey: PartitionKeyDef{Paths: []string{"/pk"}, Version: 2}, DefaultTTL: &ttl}); err != nil {
		t.Fatal(err)
	}
	c, _ := e.Container("db", "c")
	mustCreate(t, c, item("a", "p", ""))
	mustCreate(t, c, item("b", "p", `,"ttl":-1`))
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	clock.advance(10 * time.Second)
	e = openEngine(t, dir, opts)
	defer e.Close()
	info, err := e.ContainerInfo("db", "c")
	if err != nil || info.DefaultTTL == nil || *info.DefaultTTL != 10 {
		t.Fatalf("defaultTtl after restart: %v, %v", info.DefaultTTL, err)
	}
	c, _ = e.Container("db", "c")
	if _, err := c.ReadItem(key("p"), "a"); !errors.Is(err, fault.NotFound) {
		t.Fatalf("expired item read after restart: %v", err)
	}
	if _, err := c.ReadItem(key("p"), "b"); err != nil {
		t.Fatalf("item with ttl -1: %v", err)
	}
	if n := e.reapOnce(time.Now()); n != 1 {
		t.Fatalf("reaper deleted %d, want 1", n)
	}
	page, err := c.ChangeFeed(FeedQuery{Range: epk.All, AllVersions: true})
	if err != nil {
		t.Fatal(err)
	}
	last := page.Changes[len(page.Changes)-1]
	if last.Op != ChangeDelete || !last.Expired || last.ID != "a" || last.Prev == nil {
		t.Fatalf("last change %+v, want the expiry of a with its deleted version", last)
	}
	if u := c.Usage(); u.Items != 1 {
		t.Fatalf("%d items stored, want 1", u.Items)
	}
}

// The reaper spends only what users leave: a partition whose budget is spent this second is
// not reaped, and nothing it does is charged to users.
func TestReaperUsesSpareUnitsOnly(t *testing.T) {
	clock := newFakeClock()
	ttl := int64(1)
	e, c := newContainer(t, Options{Now: clock.Now}, ContainerSpec{Throughput: &Throughput{Manual: 400}, DefaultTTL: &ttl})
	for _, id := range []string{"a", "b", "c"} {
		mustCreate(t, c, item(id, "p", ""))
	}
	clock.advance(time.Second)
	p := c.partitions()[0]
	now := time.Now()
	p.Budget().Spend(now, 400, ru.High) // users spent the whole second
	before := p.Budget().Stats().Total
	if n := e.reapOnce(now); n != 0 {
		t.Fatalf("reaper deleted %d items from a busy partition", n)
	}
	if got := p.Budget().Stats().Total; got != before {
		t.Fatalf("the reaper charged users' budget: %v -> %v", before, got)
	}
	if n := e.reapOnce(now.Add(2 * time.Second)); n != 3 {
		t.Fatalf("reaper deleted %d once the partition was idle, want 3", n)
	}
	if got := p.Budget().Stats().Total; got != before {
		t.Fatalf("the reaper charged users' budget: %v -> %v", before, got)
	}
}

// A container's defaultTtl comes from the client's body: whatever it holds, reading it never
// panics, every refusal is a 400, and what is accepted is a setting Cosmos allows that reads
// back the same when written as a number.
func FuzzParseDefaultTTL(f *testing.F) {
	for _, s := range []string{
		``, `null`, ` null `, `-1`, `1`, `0`, `-2`, `2147483647`, `2147483648`, `1.5`, `1e3`, `1E+3`, `10.0`, `-1.0`,
		`1e400`, `-1e400`, strings.Repeat("9", 400), `"10"`, `true`, `[]`, `{}`, `[10]`, `{"ttl":10}`, `NaN`, `Infinity`,
		`-0`, `0x10`, `010`, `10 20`, "\xef\xbb\xbf10", "\xff", `"\ud800"`, `1e-400`, `4.9e-324`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		d, err := ParseDefaultTTL(raw)
		if err != nil {
			if !errors.Is(err, fault.BadRequest) {
				t.Fatalf("%q: failure is not a 400: %v", raw, err)
			}
			return
		}
		if d == nil {
			if s := strings.TrimSpace(string(raw)); s != "" && s != "null" {
				t.Fatalf("%q read as no time to live", raw)
			}
			return
		}
		if *d != -1 && (*d < 1 || *d > document.MaxTTL) || checkDefaultTTL(d) != nil {
			t.Fatalf("%q read as defaultTtl %d", raw, *d)
		}
		again, err := ParseDefaultTTL([]byte(strconv.FormatInt(*d, 10)))
		if err != nil || again == nil || *again != *d {
			t.Fatalf("%q read as %d, which reads back as %v, %v", raw, *d, again, err)
		}
	})
}

// indexingMode none takes no default time to live and no automatic indexing, at creation and
// at replace, in either order; a refused change leaves the container as it was.
func TestIndexingModeNoneRules(t *testing.T) {
	e, c := newContainer(t, Options{}, ContainerSpec{})
	none := json.RawMessage(`{"indexingMode":"none","automatic":false}`)
	on := int64(-1)
	for name, spec := range map[string]ContainerSpec{
		"none with automatic true": {ID: "a", Indexing: json.RawMessage(`{"indexingMode":"none","automatic":true}`)},
		"none with a default ttl":  {ID: "b", Indexing: none, DefaultTTL: &on},
	} {
		spec.PartitionKey = PartitionKeyDef{Paths: []string{"/pk"}, Version: 2}
		if _, err := e.CreateContainer("db", spec); !errors.Is(err, fault.BadRequest) {
			t.Errorf("%s: %v, want 400", name, err)
		}
	}
	if _, err := e.CreateContainer("db", ContainerSpec{ID: "n", PartitionKey: PartitionKeyDef{Paths: []string{"/pk"}, Version: 2}, Indexing: none}); err != nil {
		t.Fatal(err)
	}
	// A default ttl added to a container of mode none; mode none given to one with a ttl.
	if _, err := e.ReplaceContainer("db", "n", ContainerReplace{DefaultTTL: &on}); !errors.Is(err, fault.BadRequest) {
		t.Fatalf("a ttl on mode none: %v", err)
	}
	if _, err := e.ReplaceContainer("db", "c", ContainerReplace{DefaultTTL: &on}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ReplaceContainer("db", "c", ContainerReplace{Indexing: none, DefaultTTL: &on}); !errors.Is(err, fault.BadRequest) {
		t.Fatalf("mode none with a ttl: %v", err)
	}
	info, _ := e.ContainerInfo("db", "c")
	if info.DefaultTTL == nil || *info.DefaultTTL != -1 || strings.Contains(string(info.Indexing), "none") {
		t.Fatalf("a refused replace changed the container: ttl %v, policy %s", info.DefaultTTL, info.Indexing)
	}
	// Both at once, the ttl turned off: accepted.
	if _, err := e.ReplaceContainer("db", "c", ContainerReplace{Indexing: none}); err != nil {
		t.Fatal(err)
	}
	_ = c
}
