// Package controlplanetest starts control planes for tests on loopback.
package controlplanetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/partita-db/partita/internal/controlplane"
	"github.com/partita-db/partita/internal/nodetls"
)

// FreeAddr is a loopback address whose port and the two after it are free now: a cluster
// address, whose etcd member takes the next two ports. They are below Linux's ephemeral
// range (32768 and up), where outgoing connections would otherwise take them meanwhile.
func FreeAddr(t testing.TB) string {
	t.Helper()
	handedOut.Lock()
	defer handedOut.Unlock()
	for range 100 {
		base := 20000 + 3*rand.IntN(4000)
		if handedOut.bases[base] {
			continue
		}
		var ls []net.Listener
		for i := range 3 {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", base+i))
			if err != nil {
				break
			}
			ls = append(ls, l)
		}
		for _, l := range ls {
			l.Close()
		}
		if len(ls) == 3 {
			handedOut.bases[base] = true
			return fmt.Sprintf("127.0.0.1:%d", base)
		}
	}
	t.Fatal("no three free ports in a row")
	return ""
}

// handedOut holds the bases FreeAddr returned in this process: their ports are free until a
// server binds them, so without it two calls could return the same address (a CI run started
// a cluster whose join list named one address twice).
var handedOut = struct {
	sync.Mutex
	bases map[int]bool
}{bases: map[int]bool{}}

// Start starts a control plane of one member on loopback, closed when the test ends.
func Start(t testing.TB) *controlplane.ControlPlane {
	t.Helper()
	id, err := nodetls.New([]byte("a test cluster's secret, sixteen bytes or more"), "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	addr := FreeAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cp, err := controlplane.Start(ctx, controlplane.Config{Dir: t.TempDir(), Addr: addr, Join: []string{addr}, TLS: id})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cp.Close)
	return cp
}
