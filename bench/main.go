// Command bench generates load against any Azure Cosmos DB compatible endpoint (Partita,
// the emulator, or the real service) and reports, per workload, ops/s, latency
// percentiles, RU/s charged, errors and 429s, and, for a local server given by pid, the
// server's CPU seconds and peak RSS.
//
// It drives the endpoint either through the official Go SDK (-mode sdk) or with
// hand-signed REST requests (-mode raw); -mode etcd runs the create, upsert and read workloads
// as puts and gets of an etcd cluster instead (bench/cluster.sh sets replicated writes beside
// etcd's), and -compare-mode gives the compared endpoint its own. It creates the database and container if missing
// (-reset deletes and recreates the container) and preloads -items items before the
// workloads that read them. Workloads (-workload, comma separated, or "all"): read, create,
// upsert, replace, query-pk, query-range, query-top, count, ycsb-a, ycsb-b, ycsb-c,
// ycsb-f, load. -index-policy none creates the container with an indexing policy that indexes
// nothing (the default: the server's default policy); either applies only when the container
// is created, so use -reset (or a fresh server) when switching.
//
// With -compare-endpoint it runs each workload against the two endpoints alternately
// (A B A B ..., -rounds times) and prints the ratio B/A of each figure (A/B for latencies),
// so that both endpoints share the machine's noise.
//
// With -rate the run is paced (an open loop): operations start on a fixed schedule and their
// latency counts from the scheduled start, so a server that falls behind is charged for the
// queue it causes. -label and -compare-label name the servers in the results, which
// bench/chart draws and bench/compare.sh collects.
//
// Examples:
//
//	go run ./bench -endpoint http://127.0.0.1:18181 -workload load,read,ycsb-a -items 100000 -concurrency 32 -duration 30s
//	go run ./bench -endpoint http://127.0.0.1:18181 -mode raw -workload all -duration 5s -server-pid $(pgrep -n partita) -json results.jsonl
//	go run ./bench -endpoint http://127.0.0.1:18181 -server-pid 1234 -compare-endpoint http://127.0.0.1:18182 -compare-server-pid 5678 -workload read,query-top -rounds 3
//	go run ./bench -endpoint http://127.0.0.1:18181 -mode raw -workload read -concurrency 64 -rate 5000 -label partita-paced
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"
)

const emulatorKey = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="

// target is one endpoint under test.
type target struct {
	label, url string
	mode       string // the client: sdk, raw or etcd
	server     string // a name for reports, e.g. partita
	pid        int
	c          Client
	loaded     bool
	// consistency is the level its requests ask for; "" for the account's.
	consistency string
}

func main() {
	if err := mainErr(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func mainErr() error {
	var (
		endpoint   = flag.String("endpoint", "https://localhost:8081/", "Cosmos DB endpoint (A); in raw mode a comma-separated list of a cluster's nodes, which requests take in turn")
		key        = flag.String("key", emulatorKey, "master key of -endpoint")
		insecure   = flag.Bool("insecure", false, "skip TLS certificate verification")
		mode       = flag.String("mode", "sdk", "client: sdk (official Go SDK), raw (hand-signed REST) or etcd (puts and gets of an etcd cluster at -endpoint, its client URLs)")
		cmpMode    = flag.String("compare-mode", "", "client of -compare-endpoint (default: -mode)")
		wl         = flag.String("workload", "read", "comma-separated workloads, or all")
		conc       = flag.Int("concurrency", 8, "concurrent workers")
		dur        = flag.Duration("duration", 10*time.Second, "duration of each workload run")
		itemSize   = flag.Int("item-size", 1024, "approximate item size in bytes")
		keys       = flag.Int("keys", 100, "distinct partition key values")
		partitions = flag.Int("partitions", 1, "create the container with N*6000 RU/s (N physical partitions)")
		items      = flag.Int("items", 10000, "items preloaded for the read and query workloads (and loaded by load)")
		jsonPath   = flag.String("json", "", "append one JSON line per workload result to this file")
		db         = flag.String("db", "bench", "database name")
		container  = flag.String("container", "items", "container name")
		reset      = flag.Bool("reset", false, "delete and recreate the container first")
		pid        = flag.Int("server-pid", 0, "pid of the local server at -endpoint, to report its CPU and RSS")
		cmpEP      = flag.String("compare-endpoint", "", "second endpoint (B) to compare against -endpoint")
		cmpKey     = flag.String("compare-key", "", "master key of -compare-endpoint (default: -key)")
		cmpPID     = flag.Int("compare-server-pid", 0, "pid of the local server at -compare-endpoint")
		rounds     = flag.Int("rounds", 2, "rounds of A then B per workload in a comparison")
		label      = flag.String("label", "", "name of -endpoint's server in results, e.g. partita (default: A)")
		cmpLabel   = flag.String("compare-label", "", "name of -compare-endpoint's server in results (default: B)")
		level      = flag.String("consistency", "", "x-ms-consistency-level of -endpoint's requests (raw mode; default: the account's)")
		cmpLevel   = flag.String("compare-consistency", "", "x-ms-consistency-level of -compare-endpoint's requests (default: -consistency)")
		rate       = flag.Float64("rate", 0, "pace each run at this many operations per second (open loop; latency counts from each operation's scheduled start); 0 runs flat out")
		indexName  = flag.String("index-policy", "default", "indexing policy of the container when this tool creates it: default (the server's) or none (indexes nothing)")
	)
	flag.Parse()
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	names, err := parseWorkloads(*wl)
	if err != nil {
		return err
	}
	if *conc < 1 || *keys < 1 || *items < 1 || *partitions < 1 || *rounds < 1 {
		return fmt.Errorf("-concurrency, -keys, -items, -partitions and -rounds must be at least 1")
	}
	indexing, err := indexingPolicy(*indexName)
	if err != nil {
		return err
	}
	if *rate < 0 {
		return fmt.Errorf("-rate must be 0 (flat out) or a positive number of operations per second")
	}
	cfg := &Config{Concurrency: *conc, Duration: *dur, ItemSize: *itemSize, Keys: *keys, Items: *items, Rate: *rate}
	out, err := openJSON(*jsonPath)
	if err != nil {
		return err
	}
	defer out.close()

	targets := []*target{{label: "A", server: *label, url: *endpoint, pid: *pid, consistency: *level}}
	nRounds := 1
	if *cmpEP != "" {
		if *cmpLevel == "" {
			*cmpLevel = *level
		}
		targets = append(targets, &target{label: "B", server: *cmpLabel, url: *cmpEP, pid: *cmpPID, consistency: *cmpLevel})
		nRounds = *rounds
		if *cmpKey == "" {
			*cmpKey = *key
		}
	}
	for i, t := range targets {
		k := *key
		t.mode = *mode
		if i == 1 {
			k, t.mode = *cmpKey, cmp.Or(*cmpMode, *mode)
		}
		if t.c, err = newClient(t.mode, t.url, k, *insecure, *conc); err != nil {
			return err
		}
		if t.consistency != "" {
			rc, ok := t.c.(*rawClient)
			if !ok {
				return fmt.Errorf("-consistency needs -mode raw")
			}
			rc.consistency = t.consistency
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err = t.c.Setup(ctx, *db, *container, *partitions*6000, indexing, *reset)
		cancel()
		if err != nil {
			return fmt.Errorf("%s (%s): %w", t.label, t.url, err)
		}
	}

	for _, name := range names {
		recs := make([]*Recorder, len(targets))
		sums := make([]Summary, len(targets))
		elapsed := make([]time.Duration, len(targets))
		for _, t := range targets {
			if needsItems(name) && !t.loaded {
				if err := preload(cfg, t.c); err != nil {
					return fmt.Errorf("%s: %w", t.label, err)
				}
				t.loaded = true
			}
		}
		for round := 0; round < nRounds; round++ {
			for i, t := range targets {
				c := *cfg
				c.RunID = strconv.FormatInt(time.Now().UnixNano(), 36)
				thr0 := t.c.Throttled()
				w := watch(t.pid)
				rec, el := run(name, &c, t.c)
				var part Summary
				if err := w.Finish(&part); err != nil {
					fmt.Fprintf(os.Stderr, "bench: reading /proc/%d: %v\n", t.pid, err)
				}
				if recs[i] == nil {
					recs[i] = &Recorder{}
				}
				recs[i].Merge(rec)
				elapsed[i] += el
				sums[i].CPU += part.CPU
				sums[i].RSSPeakMB = max(sums[i].RSSPeakMB, part.RSSPeakMB)
				sums[i].HWMMB = max(sums[i].HWMMB, part.HWMMB)
				sums[i].RSSMB = part.RSSMB
				sums[i].Throttled += t.c.Throttled() - thr0
				if name == "load" {
					t.loaded = cfg.Items > 0 && rec.Errors == 0
				}
			}
		}
		for i, t := range targets {
			s := summarize(recs[i], elapsed[i])
			s.Workload, s.Endpoint, s.URL, s.Mode, s.Conc, s.Rounds = name, t.label, t.url, t.mode, *conc, nRounds
			s.CPU, s.RSSPeakMB, s.HWMMB, s.RSSMB, s.Throttled = sums[i].CPU, sums[i].RSSPeakMB, sums[i].HWMMB, sums[i].RSSMB, sums[i].Throttled
			s.Server, s.Rate, s.Index = t.server, *rate, *indexName
			if s.Server == "" {
				s.Server = t.label
			}
			sums[i] = s
			fmt.Println(textLine(s))
			errorDetail(os.Stdout, name, t.label, recs[i])
			if err := out.write(s); err != nil {
				return err
			}
		}
		if len(targets) == 2 {
			r := ratio(sums[0], sums[1])
			fmt.Println(ratioLine(r))
			if err := out.write(r); err != nil {
				return err
			}
		}
	}
	return nil
}
