package e2e

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// SIGKILL under a mix of creates, replaces, upserts and deletes (the load of
// TestCrashLosesNoAcknowledgedWrite), three times on one data directory. After each restart:
//
//   - the all-versions feed (A-IM: Full-Fidelity Feed), read from before the first change
//     (LSN 0) of every partition key range to its end, holds every acknowledged write exactly once, a write in
//     flight at the kill at most once, and exactly when the item holds what it wrote, and
//     nothing else; each item's changes come in the order they were made, each naming the LSN
//     of the one before (previousImageLSN), a delete with the version it deleted;
//   - the latest-version feed (A-IM: Incremental Feed) holds the current version of every
//     live item once, at the LSN of its last change, and no deleted item;
//   - the etag each range's read ended at before the kill resumes it after the restart with
//     exactly the changes made since.
//
// The all-versions feed needs --change-feed-retention, on by default (24h). Against a server
// built with -race (PARTITA_BIN), Pebble also checks that the server keeps its contracts: it
// sometimes overwrites the buffers of values an iterator has moved past.
func TestChangeFeedAfterCrash(t *testing.T) {
	runCrashCycles(t, crashConfig{padLen: 100, newPct: 35, check: (&feedCheck{}).check})
}

// The same while partitions split (see TestCrashDuringSplitsLosesNoAcknowledgedWrite): a range
// made by a split reads the changes its ancestors logged, and an etag an ancestor handed out
// before the kill resumes it.
func TestChangeFeedAfterCrashDuringSplits(t *testing.T) {
	runCrashCycles(t, crashConfig{padLen: 1000, newPct: 80, maxPartitionBytes: 1 << 20, check: (&feedCheck{}).check})
}

// feedCheck checks the change feed after each restart and remembers, for the next one, what
// it read and where each range's read ended.
type feedCheck struct {
	cycle int
	seen  map[feedKey]bool  // the changes read at the last check
	etags map[string]string // range id -> the etag its all-versions read ended at, last check

	l      *crashLoad
	items  map[string]*crashItem // item id -> its writer's record of it
	owner  map[string]int        // item id -> its writer
	bodies map[itemVersion]map[string]any
}

// itemVersion names version v of an item; bodies keeps the user fields of those the feed
// showed, which never change, so that each is made once.
type itemVersion struct {
	id string
	v  int
}

// isVersion reports whether fields (user fields only) are a version the load wrote of item
// id, and which.
func (f *feedCheck) isVersion(id string, fields map[string]any) (int, bool) {
	it := f.items[id]
	fv, ok := fields["v"].(float64)
	if it == nil || !ok || fv != float64(int(fv)) {
		return -1, false
	}
	k := itemVersion{id, int(fv)}
	want, ok := f.bodies[k]
	if !ok {
		want = userFields(f.l.crashBody(id, it.pk, f.owner[id], k.v))
		f.bodies[k] = want
	}
	return k.v, reflect.DeepEqual(fields, want)
}

// withoutSystem removes the system properties (_rid, _etag, _ts, _lsn, ...) from an item.
func withoutSystem(m map[string]any) map[string]any {
	for k := range m {
		if strings.HasPrefix(k, "_") {
			delete(m, k)
		}
	}
	return m
}

// feedKey names a change: ids are unique in the container here, and LSNs in an item's lineage.
type feedKey struct {
	id  string
	lsn uint64
}

// feedChange is one document of the all-versions feed.
type feedChange struct {
	op           string // "create", "replace", "delete"
	id           string
	lsn, prevLSN uint64
	// v is the version the change wrote: the item's "v" for a create or replace, one more than
	// the deleted version's for a delete; -1 when the document does not say.
	v   int
	bad string // what is wrong with the document itself, if anything
	raw json.RawMessage
}

// String abbreviates a change as c3 (create of version 3), r4 or d5, and a document that is
// not what the load wrote with a "?".
func (ch feedChange) String() string {
	s := "?"
	if ch.op != "" {
		s = ch.op[:1]
	}
	if ch.v >= 0 {
		s += fmt.Sprint(ch.v)
	}
	if ch.bad != "" {
		s += "?"
	}
	return s
}

func (w crashWrite) String() string {
	op := "r"
	switch {
	case !w.existed:
		op = "c"
	case !w.exists:
		op = "d"
	}
	return fmt.Sprintf("%s%d", op, w.v)
}

func (w crashWrite) op() string {
	switch {
	case !w.existed:
		return "create"
	case !w.exists:
		return "delete"
	}
	return "replace"
}

// parseFeedChange decodes an all-versions document and checks it is what the load wrote: a
// create or replace carries the whole version, a delete an empty current, the item's id in
// its metadata and the deleted version as previous.
func (f *feedCheck) parseChange(raw json.RawMessage) feedChange {
	ch := feedChange{v: -1, raw: raw}
	var d struct {
		Current  map[string]any `json:"current"`
		Previous map[string]any `json:"previous"`
		Metadata struct {
			OperationType    string  `json:"operationType"`
			LSN              *uint64 `json:"lsn"`
			CRTS             int64   `json:"crts"`
			PreviousImageLSN uint64  `json:"previousImageLSN"`
			ID               string  `json:"id"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		ch.bad = err.Error()
		return ch
	}
	m := d.Metadata
	ch.op, ch.prevLSN = m.OperationType, m.PreviousImageLSN
	if m.LSN == nil || *m.LSN == 0 || m.CRTS <= 0 {
		ch.bad = "no lsn or crts in its metadata"
		return ch
	}
	ch.lsn = *m.LSN
	var ok bool
	switch ch.op {
	case "create", "replace":
		cur := withoutSystem(d.Current)
		ch.id, _ = cur["id"].(string)
		if ch.v, ok = f.isVersion(ch.id, cur); !ok {
			ch.bad = "its current is no version the load wrote"
		}
	case "delete":
		ch.id = m.ID
		switch {
		case ch.id == "":
			ch.bad = "a delete without the id in its metadata"
		case d.Current == nil || len(withoutSystem(d.Current)) != 0:
			ch.bad = "a delete whose current is not {}"
		case d.Previous == nil:
			ch.bad = "a delete without the deleted version as previous"
		default:
			if ch.v, ok = f.isVersion(ch.id, withoutSystem(d.Previous)); !ok {
				ch.bad = "a delete whose previous is no version the load wrote"
			}
		}
		if ch.v >= 0 {
			ch.v++
		}
	default:
		ch.bad = "unknown operationType"
	}
	return ch
}

// readChangeFeed reads one range's change feed (aim: the A-IM header) from etag, or from the
// beginning when etag is "", to its end, a 304, and returns its documents and the etag to
// resume from.
// allChanges is the etag of a partition before its first write (LSN 0): the all-versions feed,
// which does not start from the beginning, reads all of a range's changes from it, as from a
// continuation taken before the load began.
const allChanges = `"0"`

func readChangeFeed(t *testing.T, c rawClient, aim, rangeID, etag string) ([]json.RawMessage, string) {
	t.Helper()
	var docs []json.RawMessage
	for {
		hdr := map[string]string{"A-IM": aim, "x-ms-documentdb-partitionkeyrangeid": rangeID, "x-ms-max-item-count": "300"}
		if etag != "" {
			hdr["If-None-Match"] = etag
		}
		code, h, b := c.do(t, "GET", "/dbs/db/colls/c/docs", nil, hdr)
		next := h.Get("etag")
		if code == 304 && next != "" {
			return docs, next
		}
		var page struct{ Documents []json.RawMessage }
		if code != 200 || json.Unmarshal(b, &page) != nil || len(page.Documents) == 0 || next == "" || next == etag {
			t.Fatalf("%s of range %s after etag %q: %d, %d documents, etag %q: %.300s", aim, rangeID, etag, code, len(page.Documents), next, b)
		}
		docs = append(docs, page.Documents...)
		etag = next
	}
}

func (f *feedCheck) check(t *testing.T, c rawClient, l *crashLoad) {
	f.cycle++
	f.l, f.items, f.owner = l, map[string]*crashItem{}, map[string]int{}
	if f.bodies == nil {
		f.bodies = map[itemVersion]map[string]any{}
	}
	items := f.items
	for _, wr := range l.writers {
		for _, id := range wr.ids {
			items[id], f.owner[id] = wr.items[id], wr.w
		}
	}
	bad := 0
	fail := func(format string, args ...any) {
		t.Helper()
		if bad++; bad <= 20 {
			t.Errorf("cycle %d: "+format, append([]any{f.cycle}, args...)...)
		}
	}

	// The all-versions feed of every range, from the beginning, and from where the last
	// check's read of the range (or of the ancestor it split from) ended.
	ranges := checkRangesTile(t, c)
	changes := map[string][]feedChange{} // item id -> its changes, in feed order
	rangeOf := map[string]string{}       // item id -> the range whose feed holds its changes
	seen := map[feedKey]bool{}
	etags := map[string]string{}
	total, resumed, resumedChanges := 0, 0, 0
	for _, r := range ranges {
		docs, etag := readChangeFeed(t, c, "Full-Fidelity Feed", r.ID, allChanges)
		etags[r.ID] = etag
		total += len(docs)
		var last uint64
		var fresh []feedKey // the changes the last check did not read, in order
		for _, raw := range docs {
			ch := f.parseChange(raw)
			if ch.bad != "" && ch.id == "" || ch.lsn == 0 {
				fail("range %s: %s: %.300s", r.ID, ch.bad, raw)
				continue
			}
			// Every write of this load is a command of one change, so LSNs strictly increase.
			if ch.lsn <= last {
				fail("range %s: change at LSN %d after one at LSN %d", r.ID, ch.lsn, last)
			}
			last = ch.lsn
			if items[ch.id] == nil {
				fail("range %s holds a change to %q, which no write made: %.300s", r.ID, ch.id, raw)
				continue
			}
			if was, ok := rangeOf[ch.id]; ok && was != r.ID {
				fail("the changes to %s are in the feeds of ranges %s and %s", ch.id, was, r.ID)
			}
			rangeOf[ch.id] = r.ID
			changes[ch.id] = append(changes[ch.id], ch)
			k := feedKey{ch.id, ch.lsn}
			if seen[k] {
				fail("range %s holds the change to %s at LSN %d twice", r.ID, ch.id, ch.lsn)
			}
			seen[k] = true
			if !f.seen[k] {
				fresh = append(fresh, k)
			}
		}
		from := f.etags[r.ID]
		for i := len(r.Parents) - 1; i >= 0 && from == ""; i-- {
			from = f.etags[r.Parents[i]]
		}
		if from == "" {
			continue
		}
		later, _ := readChangeFeed(t, c, "Full-Fidelity Feed", r.ID, from)
		resumed++
		resumedChanges += len(later)
		var got []feedKey
		for _, raw := range later {
			var d struct {
				Current  struct{ ID string }
				Metadata struct {
					LSN uint64
					ID  string
				}
			}
			json.Unmarshal(raw, &d)
			got = append(got, feedKey{d.Current.ID + d.Metadata.ID, d.Metadata.LSN}) // deletes: metadata.id
		}
		if !reflect.DeepEqual(got, fresh) && (len(got) > 0 || len(fresh) > 0) {
			fail("range %s resumed from etag %s (read before the kill) returns %d changes, but %d are new since: %.200v, want %.200v",
				r.ID, from, len(got), len(fresh), got, fresh)
		}
	}

	// Each item's changes are its writes: the acknowledged ones, and the one in doubt when the
	// item holds what it wrote (crashLoad.verify has settled it.exists and it.v to that).
	landed, lost := 0, 0
	for id, it := range items {
		got, writes := changes[id], it.writes
		settled := writes
		doubt := len(writes) > 0 && writes[len(writes)-1].doubt
		if doubt {
			settled = writes[:len(writes)-1]
		}
		switch {
		case sameChanges(got, settled):
			if doubt {
				it.writes = settled
				lost++
			}
		case doubt && sameChanges(got, writes):
			it.writes[len(writes)-1].doubt = false
			landed++
		default:
			inDoubt := ""
			if doubt {
				inDoubt = fmt.Sprintf(", then %v in doubt", writes[len(writes)-1])
			}
			fail("item %s: the change feed holds %v; the acknowledged writes were %v%s", id, got, settled, inDoubt)
			for _, ch := range got {
				if ch.bad != "" {
					fail("item %s: %s: %.300s", id, ch.bad, ch.raw)
				}
			}
			continue
		}
		for i, ch := range got {
			want := uint64(0)
			if ch.op != "create" {
				want = got[i-1].lsn // not the first: the first is a create
			}
			if ch.prevLSN != want {
				fail("item %s: %v at LSN %d names previousImageLSN %d, want %d", id, ch, ch.lsn, ch.prevLSN, want)
			}
		}
		exists, v := false, -1
		if n := len(it.writes); n > 0 {
			exists, v = it.writes[n-1].exists, it.writes[n-1].v
		}
		if exists != it.exists || v != it.v {
			fail("item %s: after its changes it is (exists %v, version %d), but holds (exists %v, version %d)", id, exists, v, it.exists, it.v)
		}
	}

	// The latest-version feed: each live item once, as it is now, at its last change's LSN.
	latest := map[string]bool{}
	for _, r := range ranges {
		docs, _ := readChangeFeed(t, c, "Incremental Feed", r.ID, "")
		var last uint64
		for _, raw := range docs {
			var fields map[string]any
			json.Unmarshal(raw, &fields)
			lsnField, _ := fields["_lsn"].(float64)
			lsn := uint64(lsnField)
			id, _ := withoutSystem(fields)["id"].(string)
			it := items[id]
			v, isVersion := f.isVersion(id, fields)
			switch {
			case it == nil:
				fail("the latest-version feed of range %s holds %q, which no write made: %.300s", r.ID, id, raw)
				continue
			case latest[id]:
				fail("the latest-version feed holds %s twice", id)
			case !it.exists:
				fail("the latest-version feed of range %s holds %s, which is deleted: %.300s", r.ID, id, raw)
			case !isVersion || v != it.v:
				fail("the latest-version feed of range %s holds %s as %.300s; it is at version %d", r.ID, id, raw, it.v)
			case rangeOf[id] != r.ID:
				fail("the latest-version feed of range %s holds %s, whose changes the all-versions feed of range %q holds", r.ID, id, rangeOf[id])
			case lsn != changes[id][len(changes[id])-1].lsn:
				fail("the latest-version feed of range %s holds %s at _lsn %d; its last change is at LSN %d", r.ID, id, lsn, changes[id][len(changes[id])-1].lsn)
			}
			if lsn <= last {
				fail("the latest-version feed of range %s: _lsn %d after %d", r.ID, lsn, last)
			}
			last = lsn
			latest[id] = true
		}
	}
	live := 0
	for id, it := range items {
		if it.exists {
			live++
			if !latest[id] {
				fail("the latest-version feed lacks %s (version %d)", id, it.v)
			}
		}
	}
	if bad > 0 {
		t.Errorf("cycle %d: %d problems with the change feed", f.cycle, bad)
	}
	f.seen, f.etags = seen, etags
	t.Logf("cycle %d: the all-versions feed holds %d changes in %d ranges (%d writes in doubt had landed, %d had not); "+
		"resumed %d ranges from etags read before the kill (%d changes); the latest-version feed holds %d items",
		f.cycle, total, len(ranges), landed, lost, resumed, resumedChanges, live)
}

// sameChanges reports whether a feed's changes to an item are the writes made to it, and each
// change is a document the write could have produced.
func sameChanges(got []feedChange, writes []crashWrite) bool {
	if len(got) != len(writes) {
		return false
	}
	for i, w := range writes {
		if got[i].bad != "" || got[i].op != w.op() || got[i].v != w.v {
			return false
		}
	}
	return true
}
