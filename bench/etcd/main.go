// Command etcd runs one member of an etcd cluster, of the release Partita's control plane
// embeds (go.mod's go.etcd.io/etcd/server/v3), for bench/cluster.sh: the store whose
// replicated puts Partita's replicated writes are measured against. Each member is a process
// of its own, its data synced as etcd syncs it (every write's raft entry before it is
// acknowledged), on plain HTTP on loopback.
//
//	etcd -name m1 -data DIR -client 127.0.0.1:2379 -peer 127.0.0.1:2380 \
//	     -cluster m1=http://127.0.0.1:2380,m2=http://127.0.0.1:2382,m3=http://127.0.0.1:2384
//
// It runs until it is signalled (SIGINT or SIGTERM).
package main

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "etcd:", err)
		os.Exit(1)
	}
}

func run() error {
	name := flag.String("name", "m1", "this member's name in -cluster")
	dir := flag.String("data", "", "data directory (required)")
	client := flag.String("client", "127.0.0.1:2379", "HOST:PORT clients connect to")
	peer := flag.String("peer", "127.0.0.1:2380", "HOST:PORT the other members connect to")
	cluster := flag.String("cluster", "", "every member as NAME=http://HOST:PORT, comma-separated (default: this one alone)")
	flag.Parse()
	if *dir == "" {
		return fmt.Errorf("-data is required")
	}
	cfg := embed.NewConfig()
	cfg.Name, cfg.Dir, cfg.LogLevel = *name, *dir, "fatal" // its errors are run's; the rest is noise here
	cu, err := url.Parse("http://" + *client)
	if err != nil {
		return err
	}
	pu, err := url.Parse("http://" + *peer)
	if err != nil {
		return err
	}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*cu}, []url.URL{*cu}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*pu}, []url.URL{*pu}
	cfg.InitialCluster = *cluster
	if *cluster == "" {
		cfg.InitialCluster = *name + "=" + pu.String()
	}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return err
	}
	defer e.Close()
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(time.Minute):
		return fmt.Errorf("not ready after a minute")
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	select {
	case <-sig:
		return nil
	case err := <-e.Err():
		return err
	}
}
