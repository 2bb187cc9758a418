package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

const emulatorKey = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="

func main() {
	ctx := context.Background()
	cred, _ := azcosmos.NewKeyCredential(emulatorKey)
	client, err := azcosmos.NewClientWithKey("http://127.0.0.1:18081/", cred, nil)
	if err != nil {
		log.Fatal(err)
	}
	client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "shop"}, nil)
	db, _ := client.NewDatabase("shop")
	tp := azcosmos.NewManualThroughputProperties(12000) // 2 physical partitions
	db.CreateContainer(ctx, azcosmos.ContainerProperties{ID: "orders",
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/customer"}, Version: 2}},
		&azcosmos.CreateContainerOptions{ThroughputProperties: &tp})
	container, _ := db.NewContainer("orders")
	for i := 0; i < 20; i++ {
		body := fmt.Sprintf(`{"id":"o%d","customer":"c%d","n":1}`, i, i%5)
		if _, err := container.UpsertItem(ctx, azcosmos.NewPartitionKeyString(fmt.Sprintf("c%d", i%5)), []byte(body), nil); err != nil {
			log.Fatal(err)
		}
	}

	// ---- doc example 1: whole container from the beginning, resumable
	all := azcosmos.FeedRange{MinInclusive: "", MaxExclusive: "FF"}
	var token *string // a token saved earlier resumes where it stopped
	n := 0
	for {
		resp, err := container.ReadChangeFeed(ctx, &azcosmos.ChangeFeedOptions{
			FeedRange:    &all,
			Continuation: token,
			MaxItemCount: 100,
		})
		if err != nil {
			log.Fatal(err)
		}
		token = &resp.ContinuationToken // save this to resume later
		if resp.Count == 0 {
			break // nothing new in any range; poll again later
		}
		for _, raw := range resp.Items {
			var item struct {
				ID  string `json:"id"`
				LSN int64  `json:"_lsn"`
			}
			json.Unmarshal(raw, &item)
			n++
		}
	}
	fmt.Println("example 1: changes", n, "token:", (*token)[:60], "...")

	// resume: a replace after the drain comes once more
	container.UpsertItem(ctx, azcosmos.NewPartitionKeyString("c0"), []byte(`{"id":"o0","customer":"c0","n":2}`), nil)
	resp, err := container.ReadChangeFeed(ctx, &azcosmos.ChangeFeedOptions{FeedRange: &all, Continuation: token})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("resume:", resp.Count, string(resp.Items[0]))
	token = &resp.ContinuationToken
	resp, _ = container.ReadChangeFeed(ctx, &azcosmos.ChangeFeedOptions{FeedRange: &all, Continuation: token})
	fmt.Println("resume again:", resp.Count)

	// ---- doc example 2: one range per consumer
	ranges, err := container.ReadFeedRanges(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range ranges {
		var tok *string
		cnt := 0
		for {
			resp, err := container.ReadChangeFeed(ctx, &azcosmos.ChangeFeedOptions{FeedRange: &r, Continuation: tok})
			if err != nil {
				log.Fatal(err)
			}
			tok = &resp.ContinuationToken
			if resp.Count == 0 {
				break
			}
			cnt += resp.Count
		}
		fmt.Printf("range %s-%s: %d\n", r.MinInclusive, r.MaxExclusive, cnt)
	}

	// ---- doc example 3: one logical partition, from a point in time
	time.Sleep(1100 * time.Millisecond)
	since := time.Now()
	container.UpsertItem(ctx, azcosmos.NewPartitionKeyString("c1"), []byte(`{"id":"o1","customer":"c1","n":2}`), nil)
	container.UpsertItem(ctx, azcosmos.NewPartitionKeyString("c2"), []byte(`{"id":"o2","customer":"c2","n":2}`), nil)
	pk := azcosmos.NewPartitionKeyString("c1")
	var tok *string
	for {
		resp, err := container.ReadChangeFeed(ctx, &azcosmos.ChangeFeedOptions{
			FeedRange:    &all,
			PartitionKey: &pk,
			StartFrom:    &since,
			Continuation: tok,
		})
		if err != nil {
			log.Fatal(err)
		}
		tok = &resp.ContinuationToken
		if resp.Count == 0 {
			break
		}
		for _, raw := range resp.Items {
			fmt.Println("c1 since:", string(raw))
		}
	}
}
