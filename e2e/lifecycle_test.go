package e2e

import (
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"
)

// A SIGTERM while writers are busy loses no acknowledged write, and the data survives a restart.
func TestShutdownUnderLoadLosesNothing(t *testing.T) {
	dir := t.TempDir()
	s := startServerIn(t, dir, false)
	c := rawClient{s: s, key: emulatorKey, now: time.Now}
	c.do(t, "POST", "/dbs", []byte(`{"id":"db"}`), nil)
	if code, _, b := c.do(t, "POST", "/dbs/db/colls", []byte(`{"id":"c","partitionKey":{"paths":["/pk"],"version":2}}`), map[string]string{"x-ms-offer-throughput": "24000"}); code != 201 {
		t.Fatalf("create container: %d %s", code, b)
	}
	var mu sync.Mutex
	acked := map[string]string{} // id -> partition key
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				id, pk := fmt.Sprintf("w%d-%d", w, i), fmt.Sprintf("k%d", i%50)
				code, ok := c.tryDo("POST", "/dbs/db/colls/c/docs", []byte(fmt.Sprintf(`{"id":%q,"pk":%q}`, id, pk)),
					map[string]string{"x-ms-documentdb-partitionkey": fmt.Sprintf("[%q]", pk)})
				if !ok {
					return // the server has gone
				}
				if code == 201 {
					mu.Lock()
					acked[id] = pk
					mu.Unlock()
				}
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	s.cmd.Process.Signal(syscall.SIGTERM)
	if err := s.cmd.Wait(); err != nil {
		t.Fatalf("server exit after SIGTERM: %v", err)
	}
	close(stop)
	wg.Wait()
	if len(acked) == 0 {
		t.Fatal("no write was acknowledged before the shutdown")
	}

	s2 := startServerIn(t, dir, false)
	c2 := rawClient{s: s2, key: emulatorKey, now: time.Now}
	for id, pk := range acked {
		if code, _, b := c2.do(t, "GET", "/dbs/db/colls/c/docs/"+id, nil, map[string]string{"x-ms-documentdb-partitionkey": fmt.Sprintf("[%q]", pk)}); code != 200 {
			t.Fatalf("acknowledged item %s missing after restart: %d %s", id, code, b)
		}
	}
	t.Logf("%d acknowledged writes all present after SIGTERM and restart", len(acked))
}
