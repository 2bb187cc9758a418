package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// The Go SDK's ReadChangeFeed, drained with its composite continuation while the container
// splits under it, sees every create once and, after replaces, each replaced item once more
// in its new version; a partition key's feed sees only that logical partition; a point in
// time skips what came before it.
func TestGoSDKChangeFeedThroughSplits(t *testing.T) {
	s, c := splittingContainer(t)
	ctx := ctx(t)
	pad := strings.Repeat("x", 900)
	pkOf := func(i int) string { return fmt.Sprintf("k%d", i%50) }
	write := func(from, to, version int) {
		for i := from; i < to; i++ {
			body := fmt.Sprintf(`{"id":"%d","pk":%q,"v":%d,"pad":%q}`, i, pkOf(i), version, pad)
			if _, err := c.UpsertItem(ctx, azcosmos.NewPartitionKeyString(pkOf(i)), []byte(body), nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	type change struct {
		ID  string `json:"id"`
		PK  string `json:"pk"`
		V   int    `json:"v"`
		LSN *int64 `json:"_lsn"`
	}
	// read reads pages with opts, continuing from and updating *token, until the SDK reports
	// nothing new in any range or after pages pages when pages > 0.
	read := func(opts azcosmos.ChangeFeedOptions, token **string, pages int, fn func(change)) {
		for n := 0; pages <= 0 || n < pages; n++ {
			opts.Continuation = *token
			resp, err := c.ReadChangeFeed(ctx, &opts)
			if err != nil {
				t.Fatal(err)
			}
			*token = &resp.ContinuationToken
			if resp.Count == 0 {
				return
			}
			for _, raw := range resp.Items {
				var ch change
				if err := json.Unmarshal(raw, &ch); err != nil || ch.LSN == nil {
					t.Fatalf("change %s: %v (or no _lsn)", raw, err)
				}
				fn(ch)
			}
		}
	}
	all := azcosmos.FeedRange{MinInclusive: "", MaxExclusive: "FF"}
	var token *string
	// drain reads the whole container's feed, counting each id's versions.
	drain := func(seen map[string][]int, pages int) {
		read(azcosmos.ChangeFeedOptions{FeedRange: &all, MaxItemCount: 150}, &token, pages, func(ch change) {
			seen[ch.ID] = append(seen[ch.ID], ch.V)
		})
	}
	rc := rawClient{s: s, key: emulatorKey, now: time.Now}
	ranges := func() int { // read by hand: the SDK caches the ranges
		_, _, b := rc.do(t, "GET", "/dbs/db/colls/c/pkranges", nil, nil)
		var r struct{ PartitionKeyRanges []json.RawMessage }
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		return len(r.PartitionKeyRanges)
	}

	write(0, 2000, 1)
	seen := map[string][]int{}
	drain(seen, 3) // part of the feed, then more writes and splits under the reader
	before := ranges()
	write(2000, 5000, 1)
	for deadline := time.Now().Add(20 * time.Second); ranges() <= before && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	if after := ranges(); after <= before {
		t.Fatalf("no split happened while the feed was read (%d ranges, %d before)", after, before)
	}
	drain(seen, 0)
	for i := range 5000 {
		if v := seen[fmt.Sprint(i)]; len(v) != 1 || v[0] != 1 {
			t.Fatalf("item %d seen as %v, want once in version 1", i, v)
		}
	}
	if len(seen) != 5000 {
		t.Fatalf("%d items seen, want 5000", len(seen))
	}

	// Replaces after the drain come once more each, in their new version; twice replaced
	// items come once, in their last.
	time.Sleep(1100 * time.Millisecond) // the feed's time is in seconds
	since := time.Now()
	write(100, 200, 2)
	write(150, 200, 3)
	again := map[string][]int{}
	drain(again, 0)
	if len(again) != 100 {
		t.Fatalf("%d items seen after the replaces, want 100", len(again))
	}
	for i := 100; i < 200; i++ {
		want := 2
		if i >= 150 {
			want = 3
		}
		if v := again[fmt.Sprint(i)]; len(v) != 1 || v[0] != want {
			t.Fatalf("item %d seen as %v after the replaces, want once in version %d", i, v, want)
		}
	}

	// One logical partition, from a point in time: only its items changed since.
	pk := azcosmos.NewPartitionKeyString("k7")
	fr, err := c.ReadFeedRanges(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, r := range fr {
		var tok *string
		read(azcosmos.ChangeFeedOptions{FeedRange: &r, PartitionKey: &pk, StartFrom: &since}, &tok, 0, func(ch change) {
			if ch.PK != "k7" {
				t.Fatalf("the feed of k7 returned %+v", ch)
			}
			got[ch.ID]++
		})
	}
	// k7 holds ids 7, 57, 107, ...: of those replaced (100..199), 107 and 157.
	if len(got) != 2 || got["107"] != 1 || got["157"] != 1 {
		t.Fatalf("k7's feed since the replaces: %v, want 107 and 157 once", got)
	}
}
