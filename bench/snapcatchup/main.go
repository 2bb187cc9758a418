// Command snapcatchup measures a learner's catch-up from a snapshot of a large partition, with
// the snapshot sent inline (in its MsgSnap's envelope, as releases before streams do) and
// streamed (on a stream of its own, in bounded memory), in one run: each node is a process of
// its own, so that its peak resident memory (VmHWM) is its own.
//
//	go run ./bench/snapcatchup -size 1GiB -work /tmp/snapcatchup
//
// First a node loads one replicated partition (a one-replica Raft group of a real partition,
// items of about 1 KB created through Raft) to the size asked, and stops. Then, for each way,
// a copy of its store is started as node 1 (the leader) beside an empty node 2, node 1 adds
// a learner on node 2 (after compacting its log, so that the learner needs a snapshot) and
// times until its replica's log matches the leader's; then both nodes compare their replicas'
// state, and VmHWM of each process is read from /proc. The processes run the replication
// host and gRPC transport of `partita serve` (internal/replication, internal/raftrpc), with
// its storage defaults (a 128 MB cache), without the engine around them.
package main

import (
	"bufio"
	"context"
	crand "crypto/rand"
	"encoding/base64"
	"flag"
	"fmt"
	"github.com/partita-db/partita/bench/procfs"
	"github.com/partita-db/partita/internal/replication/replicationtest"
	"hash/fnv"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/nodetls"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/raftrpc"
	"github.com/partita-db/partita/internal/replica"
	"github.com/partita-db/partita/internal/replication"
	"github.com/partita-db/partita/internal/rid"
	"github.com/partita-db/partita/internal/storage"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "node" {
		if err := runNode(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "node:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "snapcatchup:", err)
		os.Exit(1)
	}
}

func run() error {
	size := flag.String("size", "1GiB", "the partition's size: its items' bytes as stored (keys and values of its spans)")
	work := flag.String("work", "", "directory for the nodes' stores (default: a new temporary one, removed after)")
	modes := flag.String("modes", "inline,streamed", "the ways to send the snapshot, in order")
	keep := flag.Bool("keep", false, "keep the work directory (a later run with the same -work reuses its loaded partition)")
	cache := flag.String("cache", "128MiB", "each node's storage cache (storage.Options.CacheSize; partita serve's default)")
	flag.Parse()
	total, err := parseSize(*size)
	if err != nil {
		return err
	}
	if cacheSize, err = parseSize(*cache); err != nil {
		return err
	}
	dir := *work
	if dir == "" {
		if dir, err = os.MkdirTemp("", "snapcatchup"); err != nil {
			return err
		}
	}
	if !*keep {
		defer os.RemoveAll(dir)
	}
	seed := filepath.Join(dir, "seed")
	if _, err := os.Stat(seed); err != nil {
		fmt.Printf("loading a partition of %s into %s\n", *size, seed)
		start := time.Now()
		n, err := startNode(dir, 1, seed, false)
		if err != nil {
			return err
		}
		if _, err := n.ask("bootstrap"); err != nil {
			return err
		}
		out, err := n.ask(fmt.Sprintf("load %d", total))
		if err != nil {
			return err
		}
		fmt.Printf("loaded: %s in %v\n", out, time.Since(start).Round(time.Second))
		n.quit()
	}
	type result struct {
		mode                                 string
		took                                 string
		state                                string
		sendBase, sendHWM, recvBase, recvHWM float64
		sent                                 string
	}
	var results []result
	for _, mode := range strings.Split(*modes, ",") {
		stream := mode == "streamed"
		if !stream && mode != "inline" {
			return fmt.Errorf("a way %q: inline or streamed", mode)
		}
		run := filepath.Join(dir, mode)
		os.RemoveAll(run)
		if err := os.CopyFS(filepath.Join(run, "n1"), os.DirFS(seed)); err != nil {
			return err
		}
		n1, err := startNode(dir, 1, filepath.Join(run, "n1"), stream)
		if err != nil {
			return err
		}
		n2, err := startNode(dir, 2, filepath.Join(run, "n2"), stream)
		if err != nil {
			n1.quit()
			return err
		}
		if _, err := n1.ask("lead"); err != nil {
			return err
		}
		r := result{mode: mode}
		_, r.sendBase, _ = procfs.Memory(n1.cmd.Process.Pid)
		_, r.recvBase, _ = procfs.Memory(n2.cmd.Process.Pid)
		fmt.Printf("%s: adding a learner on node 2\n", mode)
		took, err := n1.ask(fmt.Sprintf("add 2 %s", n2.store))
		if err != nil {
			return err
		}
		r.took = took
		_, r.sendHWM, _ = procfs.Memory(n1.cmd.Process.Pid)
		_, r.recvHWM, _ = procfs.Memory(n2.cmd.Process.Pid)
		s1, err := n1.ask("state")
		if err != nil {
			return err
		}
		s2, err := n2.ask("state")
		if err != nil {
			return err
		}
		if s1 != s2 {
			return fmt.Errorf("%s: the learner holds %s, the leader %s", mode, s2, s1)
		}
		r.state = s1
		r.sent, _ = n1.ask("sent")
		n1.quit()
		n2.quit()
		fmt.Printf("%s: caught up in %s; VmHWM sender %.0f MB, receiver %.0f MB\n", mode, took, r.sendHWM/1024, r.recvHWM/1024)
		results = append(results, r)
	}
	fmt.Printf("\n| snapshot | catch-up | sender VmHWM (before) | receiver VmHWM (before) |\n| --- | ---: | ---: | ---: |\n")
	for _, r := range results {
		fmt.Printf("| %s | %s | %.0f MB (%.0f MB) | %.0f MB (%.0f MB) |\n", r.mode, r.took, r.sendHWM/1024, r.sendBase/1024, r.recvHWM/1024, r.recvBase/1024)
	}
	for _, r := range results {
		fmt.Printf("%s: replica %s; %s\n", r.mode, r.state, r.sent)
	}
	return nil
}

func parseSize(s string) (int64, error) {
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSuffix(s, u.suffix), u.m
			break
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	return int64(f * float64(mult)), err
}

// child is a node process the parent drives through its standard input and output: a command
// a line, answered by a line "ok ..." or "error ...".
type child struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	out   *bufio.Scanner
	store string
}

// addrs are the nodes' cluster addresses, chosen once per run; cacheSize is -cache.
var (
	addrsOnce sync.Once
	addrs     string
	cacheSize int64
)

func startNode(work string, id int, dir string, stream bool) (*child, error) {
	addrsOnce.Do(func() {
		var parts []string
		for i := 1; i <= 2; i++ {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				panic(err)
			}
			parts = append(parts, fmt.Sprintf("%d=%s", i, l.Addr()))
			l.Close()
		}
		addrs = strings.Join(parts, ",")
	})
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, "node", "-id", strconv.Itoa(id), "-dir", dir, "-peers", addrs, "-stream="+strconv.FormatBool(stream),
		"-cache", strconv.FormatInt(cacheSize, 10))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &child{cmd: cmd, in: in, out: bufio.NewScanner(out)}
	c.out.Buffer(nil, 1<<20)
	line, err := c.read()
	if err != nil {
		return nil, err
	}
	c.store = strings.TrimPrefix(line, "store ")
	return c, nil
}

func (c *child) read() (string, error) {
	if !c.out.Scan() {
		return "", fmt.Errorf("the node stopped: %v", c.out.Err())
	}
	line := c.out.Text()
	if rest, ok := strings.CutPrefix(line, "error "); ok {
		return "", fmt.Errorf("the node: %s", rest)
	}
	return strings.TrimPrefix(line, "ok "), nil
}

func (c *child) ask(cmd string) (string, error) {
	if _, err := fmt.Fprintln(c.in, cmd); err != nil {
		return "", err
	}
	return c.read()
}

func (c *child) quit() {
	c.ask("quit")
	c.in.Close()
	c.cmd.Wait()
}

// The node process.

const (
	container  = 7
	databaseNo = 3
	partID     = 1
	group      = replication.GroupID(uint64(container)<<32 | partID)
)

var containerRID = rid.ForContainer(rid.ForDatabase(databaseNo), container)

type node struct {
	id    replication.NodeID
	db    *storage.DB
	tr    *raftrpc.Transport
	host  *replication.Host
	mu    sync.Mutex
	parts map[replication.GroupID]*partition.Partition
	sent  atomic.Value // the log line of the last snapshot streamed
}

func runNode(args []string) error {
	fl := flag.NewFlagSet("node", flag.ExitOnError)
	id := fl.Int("id", 1, "node id")
	dir := fl.String("dir", "", "store directory")
	peers := fl.String("peers", "", "id=addr,... of every node")
	stream := fl.Bool("stream", false, "stream snapshots (raftrpc.Config.StreamSnapshots)")
	cache := fl.Int64("cache", 0, "storage cache bytes (0: storage's default)")
	fl.Parse(args)
	addrs := map[replication.NodeID]string{}
	for _, p := range strings.Split(*peers, ",") {
		k, v, _ := strings.Cut(p, "=")
		n, _ := strconv.Atoi(k)
		addrs[replication.NodeID(n)] = v
	}
	n := &node{id: replication.NodeID(*id), parts: map[replication.GroupID]*partition.Partition{}}
	var err error
	if n.db, err = storage.Open(*dir, storage.Options{CacheSize: *cache}); err != nil {
		return err
	}
	tls, err := nodetls.New([]byte("the secret of the snapshot catch-up bench"), "127.0.0.1")
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", addrs[n.id])
	if err != nil {
		return err
	}
	ready := make(chan struct{})
	n.tr = raftrpc.New(raftrpc.Config{Node: n.id, TLS: tls,
		Resolve:         func(id replication.NodeID) (string, bool) { a, ok := addrs[id]; return a, ok },
		Deliver:         func(env *replication.Envelope) { <-ready; n.host.Deliver(env) },
		StreamSnapshots: func() bool { return *stream }})
	go n.tr.Serve(l)
	log := slog.New(&sentLog{n: n, Handler: slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})})
	n.host, err = replication.New(replication.Config{Node: n.id, DB: n.db, Transport: n.tr, Open: n.open, Logger: log})
	if err != nil {
		return err
	}
	close(ready)
	n.host.Start()
	fmt.Printf("store %d\n", n.host.Store())
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		f := strings.Fields(in.Text())
		if len(f) == 0 {
			continue
		}
		if f[0] == "quit" {
			fmt.Println("ok")
			break
		}
		out, err := n.do(f)
		if err != nil {
			fmt.Printf("error %v\n", err)
			continue
		}
		fmt.Printf("ok %s\n", out)
	}
	n.tr.Close()
	n.host.Close()
	return n.db.Close()
}

// sentLog keeps the host's line about a snapshot it streamed (bytes, sstables, time).
type sentLog struct {
	slog.Handler
	n *node
}

func (s *sentLog) Enabled(ctx context.Context, l slog.Level) bool { return true }

func (s *sentLog) Handle(ctx context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "snapshot streamed") {
		var b strings.Builder
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "bytes" || a.Key == "sstables" || a.Key == "took" {
				fmt.Fprintf(&b, "%s=%v ", a.Key, a.Value)
			}
			return true
		})
		s.n.sent.Store("streamed " + strings.TrimSpace(b.String()))
	}
	if r.Level < slog.LevelWarn {
		return nil
	}
	return s.Handler.Handle(ctx, r)
}

func (n *node) do(f []string) (string, error) {
	switch f[0] {
	case "bootstrap":
		m := replication.Member{Replica: 1, Node: n.id, Store: n.host.Store()}
		if err := n.host.Bootstrap(group, replicationtest.MetaOf(partID, epk.All), []replication.Member{m}, 1); err != nil {
			return "", err
		}
		return n.lead()
	case "lead":
		return n.lead()
	case "load":
		total, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return "", err
		}
		return n.load(total)
	case "add":
		node, _ := strconv.Atoi(f[1])
		store, _ := strconv.ParseUint(f[2], 10, 64)
		return n.addLearner(replication.NodeID(node), replication.StoreID(store))
	case "state":
		return n.state()
	case "sent":
		if s, ok := n.sent.Load().(string); ok {
			return s, nil
		}
		return "inline", nil
	}
	return "", fmt.Errorf("unknown command %q", f[0])
}

// lead campaigns in the group and waits for the partition to lead.
func (n *node) lead() (string, error) {
	if err := n.host.Campaign(group); err != nil {
		return "", err
	}
	deadline := time.Now().Add(time.Minute)
	for {
		if p := n.part(); p != nil && p.Leading() {
			return "leading", nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("the partition does not lead")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (n *node) part() *partition.Partition {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.parts[group]
}

// load creates items of about 1 KB until the partition's spans hold total bytes, with four
// writers of 64 items a command.
func (n *node) load(total int64) (string, error) {
	p := n.part()
	var (
		next, written atomic.Int64
		wg            sync.WaitGroup
		mu            sync.Mutex
		firstErr      error
	)
	// An item's stored bytes (the document, its index entries, its feed entry) are measured
	// every 65,536 items rather than guessed.
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pad := make([]byte, 700)
			for {
				base := next.Add(64) - 64
				if base%65536 == 0 {
					if b, _, err := n.spanBytes(); err == nil {
						written.Store(b)
					}
				}
				if written.Load() >= total {
					return
				}
				var ops []partition.Operation
				for i := base; i < base+64; i++ {
					crand.Read(pad)
					id := fmt.Sprintf("item-%09d", i)
					body := fmt.Sprintf(`{"id":%q,"pk":"pk-%d","n":%d,"pad":%q}`, id, i%1000, i, base64.StdEncoding.EncodeToString(pad))
					item, key, err := document.Parse([]byte(body), [][]string{{"pk"}})
					if err != nil {
						panic(err)
					}
					ops = append(ops, partition.Operation{Kind: partition.Create, EPK: epk.SchemeV2.Hash(key), ID: id, Item: item})
				}
				for {
					_, err := p.Execute(ops...)
					if err == nil {
						break
					}
					if !partition.Retriable(err) {
						mu.Lock()
						firstErr = err
						mu.Unlock()
						return
					}
					time.Sleep(10 * time.Millisecond)
				}
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return "", firstErr
	}
	return n.state()
}

// spanBytes is what the partition's spans hold: their keys' and values' bytes, and a hash of
// them.
func (n *node) spanBytes() (int64, uint64, error) {
	p := n.part()
	if p == nil {
		return 0, 0, fmt.Errorf("no replica")
	}
	snap := n.db.NewSnapshot()
	defer snap.Close()
	h := fnv.New64a()
	var total int64
	for _, s := range p.Spans() {
		it, err := snap.NewIter(s.Start, s.End)
		if err != nil {
			return 0, 0, err
		}
		for it.First(); it.Valid(); it.Next() {
			h.Write(it.Key())
			h.Write(it.Value())
			total += int64(len(it.Key()) + len(it.Value()))
		}
		if err := it.Close(); err != nil {
			return 0, 0, err
		}
	}
	return total, h.Sum64(), nil
}

func (n *node) state() (string, error) {
	b, h, err := n.spanBytes()
	if err != nil {
		return "", err
	}
	index, _, _ := n.part().AppliedIndex()
	return fmt.Sprintf("applied=%d bytes=%d (%.2f GiB) hash=%x", index, b, float64(b)/(1<<30), h), nil
}

// addLearner adds a replica on node through the leader here and returns how long until the
// leader knew the replica's log to match its own: it got a snapshot, installed it, and
// acknowledged what followed.
func (n *node) addLearner(node replication.NodeID, store replication.StoreID) (string, error) {
	if err := n.host.CompactLog(group); err != nil {
		return "", err
	}
	start := time.Now()
	added, err := n.host.ChangeMembers(group, []replication.Change{{Kind: replication.AddLearner, Node: node, Store: store}})
	if err != nil {
		return "", err
	}
	r := added[0].Replica
	for {
		st, ok := n.host.Status(group)
		if ok && st.Match[r] >= st.Applied && st.Applied > 0 {
			return time.Since(start).Round(10 * time.Millisecond).String(), nil
		}
		if time.Since(start) > 30*time.Minute {
			return "", fmt.Errorf("the learner did not catch up in 30 minutes")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// The partition as a replica's state machine, as the engine and the replication tests' harness
// open it.

func (n *node) open(g replication.GroupID, raw []byte, hd *replication.Handle) (replication.StateMachine, error) {
	id, r, err := replicationtest.ParseMeta(raw)
	if err != nil {
		return nil, err
	}
	p, err := partition.Open(partition.Config{
		DB: n.db, Container: container, ID: id, Range: r, ContainerRID: containerRID,
		SelfPrefix:      "dbs/" + rid.ForDatabase(databaseNo).String() + "/colls/" + containerRID.String() + "/docs/",
		MaxLogicalBytes: 1 << 40, Replica: hd,
	})
	if err != nil {
		return nil, err
	}
	n.mu.Lock()
	n.parts[g] = p
	n.mu.Unlock()
	return forgetting{replica.Of(p), func() {
		n.mu.Lock()
		if n.parts[g] == p {
			delete(n.parts, g)
		}
		n.mu.Unlock()
	}}, nil
}

// forgetting is a replica's state machine that the node forgets once closed or discarded.
type forgetting struct {
	replication.StateMachine
	forget func()
}

func (f forgetting) Close()   { f.forget(); f.StateMachine.Close() }
func (f forgetting) Discard() { f.forget(); f.StateMachine.Discard() }
