package e2e

import (
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Burst capacity (--burst-capacity): a 400 RU/s partition left idle for some seconds absorbs a
// spike of about four seconds' worth of its rate without a 429, where the same spike on a
// server without it is throttled; the partitions view shows the bank.
func TestBurstCapacity(t *testing.T) {
	for _, burst := range []bool{true, false} {
		t.Run(fmt.Sprintf("burst=%v", burst), func(t *testing.T) {
			s := startServer(t, false, fmt.Sprintf("--burst-capacity=%v", burst))
			c := rawClient{s: s, key: emulatorKey, now: time.Now}
			c.throughputContainer(t, 400)
			time.Sleep(8 * time.Second) // idle: about 3,200 RU banked with burst capacity
			code, _, b := c.do(t, "GET", "/dbs/db/colls/c/partitions", nil, nil)
			var view struct {
				Partitions []struct {
					BurstRU *float64 `json:"burstRU"`
				} `json:"partitions"`
			}
			if err := json.Unmarshal(b, &view); code != 200 || err != nil || len(view.Partitions) != 1 {
				t.Fatalf("partitions view: %d %s %v", code, b, err)
			}
			switch bank := view.Partitions[0].BurstRU; {
			case burst && (bank == nil || *bank < 2000):
				t.Fatalf("after 8 idle seconds the view shows %v RU banked", view.Partitions[0].BurstRU)
			case !burst && bank != nil:
				t.Fatalf("without burst capacity the view shows %v RU banked", *bank)
			}
			// The spike: 300 creates of about 5.7 RU each, some 1,700 RU, from 8 clients.
			var throttled, created atomic.Int64
			var wg sync.WaitGroup
			for w := range 8 {
				wg.Go(func() {
					for i := range 300 / 8 {
						pk := fmt.Sprintf("p%d", i%10)
						body := []byte(fmt.Sprintf(`{"id":"w%d-%d","pk":%q,"pad":"%0200d"}`, w, i, pk, 0))
						code, _, b := c.do(t, "POST", "/dbs/db/colls/c/docs", body, map[string]string{"x-ms-documentdb-partitionkey": fmt.Sprintf(`[%q]`, pk)})
						switch code {
						case 201:
							created.Add(1)
						case 429:
							throttled.Add(1)
						default:
							t.Errorf("create: %d %s", code, b)
						}
					}
				})
			}
			wg.Wait()
			t.Logf("burst capacity %v: %d created, %d throttled", burst, created.Load(), throttled.Load())
			if burst && throttled.Load() > 0 {
				t.Fatalf("with burst capacity %d of the spike's creates were throttled", throttled.Load())
			}
			if !burst && throttled.Load() == 0 {
				t.Fatal("without burst capacity the spike was never throttled")
			}
		})
	}
}
