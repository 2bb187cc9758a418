package partition

import (
	"fmt"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/storage"
)

// Retention reads the changes committed since its last pass, not the whole log: the changes it
// keeps (current versions) are never read again, because the write that replaces or deletes one
// removes it. Only the first pass after the partition is opened reads the log from its start.
func TestPurgeReadsOnlyNewChanges(t *testing.T) {
	db, err := storage.Open(t.TempDir(), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cfg := Config{DB: db, Container: 1, ID: 0, Range: epk.All, MaxLogicalBytes: 1 << 30, KeepImages: true}
	p, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { p.Close() }()
	write := func(kind OpKind, i, v int) {
		t.Helper()
		id := fmt.Sprint("item-", i)
		item, key, err := document.Parse(fmt.Appendf(nil, `{"id":%q,"pk":"k%d","v":%d}`, id, i%13, v), [][]string{{"pk"}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Execute(Operation{Kind: kind, EPK: epk.SchemeV2.Hash(key), ID: id, Item: item}); err != nil {
			t.Fatal(err)
		}
	}
	cutoff := time.Now().Add(time.Hour).Unix() // every change is past retention
	purge := func(wantRemoved, wantRead, wantLog int) {
		t.Helper()
		removed, read, err := p.PurgeLog(cutoff)
		if err != nil {
			t.Fatal(err)
		}
		if removed != wantRemoved || read != wantRead {
			t.Fatalf("purge removed %d changes and read %d, want %d and %d", removed, read, wantRemoved, wantRead)
		}
		if n := logEntries(t, db); n != wantLog {
			t.Fatalf("the log holds %d changes after the purge, want %d", n, wantLog)
		}
	}

	const items = 500
	for i := range items {
		write(Create, i, 0)
	}
	purge(0, 2*items, items) // the first pass reads the new changes, then the whole log
	purge(0, 0, items)       // nothing new: nothing read
	for i := range 100 {
		write(Replace, i, 1) // removes the create it replaces, behind the purge point
	}
	if n := logEntries(t, db); n != items {
		t.Fatalf("after 100 replaces the log holds %d changes, want %d", n, items)
	}
	purge(0, 200, items) // the 100 replaces, read by each phase
	for i := range 50 {
		write(Delete, i, 2)
	}
	purge(50, 100, items-50) // the deletes themselves go

	// Opened again, the partition reads its whole log once more (a log written by a release
	// whose writes did not remove changes behind the purge point), then only what is new.
	p.Close()
	if p, err = Open(cfg); err != nil {
		t.Fatal(err)
	}
	purge(0, items-50, items-50)
	purge(0, 0, items-50)
	page := 0
	if _, err := p.ReadLog(LogRead{Range: epk.All}, func(*LogChange) bool { page++; return true }); err != nil || page != items-50 {
		t.Fatalf("the latest-version feed holds %d changes (%v), want %d", page, err, items-50)
	}
}

// logEntries counts the changes the log of partition 0 of container 1 holds.
func logEntries(t *testing.T, db *storage.DB) int {
	t.Helper()
	snap := db.NewSnapshot()
	defer snap.Close()
	start, end := storage.LogSpan(1, 0, 0)
	it, err := snap.NewIter(start, end)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	n := 0
	for it.First(); it.Valid(); it.Next() {
		n++
	}
	return n
}
