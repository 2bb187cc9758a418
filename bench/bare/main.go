// Command bare is the ceiling any Cosmos-compatible HTTP gateway can reach on a machine: a
// plain net/http server that checks the same master-key signature a point read carries and
// answers with a fixed 1 KB body. Measured with the same presigned request as a real server,
// it tells how much of a point read's cost is HTTP itself.
//
//	go run ./bench/bare serve -addr 127.0.0.1:18300
//	go run ./bench/bare sign -link dbs/bench/colls/items/docs/item-1 > /tmp/read.lua   # a wrk script
//	wrk -t2 -c64 -d10s -s /tmp/read.lua http://127.0.0.1:18300/dbs/bench/colls/items/docs/item-1
//	go run ./bench/bare sign -verb POST -link dbs/bench/colls/items > /tmp/create.lua       # creates new items
//	wrk -t2 -c64 -d10s -s /tmp/create.lua http://127.0.0.1:18300/dbs/bench/colls/items/docs
package main

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/partita-db/partita/internal/masterkey"
)

const emulatorKey = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="

// createScript is the request half of a wrk script that creates items; %s names the script.
const createScript = `wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local run, pad, threads, n = "%s", string.rep("x", 960), 0, 0
function setup(thread)
  thread:set("tid", threads)
  threads = threads + 1
end
function request()
  n = n + 1
  local pk = "pk-" .. (n %% 100)
  wrk.headers["x-ms-documentdb-partitionkey"] = '["' .. pk .. '"]'
  return wrk.format(nil, nil, nil, '{"id":"c' .. run .. '-' .. tid .. '-' .. n .. '","pk":"' .. pk .. '","n":' .. n .. ',"pad":"' .. pad .. '"}')
end
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: bare serve|sign [flags]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:18300", "address to serve on")
	keyB64 := fs.String("key", emulatorKey, "account key")
	link := fs.String("link", "dbs/bench/colls/items/docs/item-1", "resource link of the item to read, or of the container to create in (with -verb POST)")
	verb := fs.String("verb", "GET", "GET signs a read of -link; POST signs a create of an item in -link")
	pk := fs.String("pk", `["k1"]`, "partition key header value")
	fs.Parse(os.Args[2:])
	key, err := masterkey.Parse(*keyB64)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bad key:", err)
		os.Exit(2)
	}
	switch os.Args[1] {
	case "sign":
		date := time.Now().UTC().Format(http.TimeFormat)
		// A wrk script: the signature stays valid for the 15 minutes Cosmos allows.
		if *verb != "GET" && *verb != "POST" {
			fmt.Fprintln(os.Stderr, "bare sign: -verb must be GET or POST")
			os.Exit(2)
		}
		fmt.Printf("wrk.headers[%q] = %q\nwrk.headers[%q] = %q\nwrk.headers[%q] = %q\n",
			"x-ms-date", date, "Authorization", key.Authorization(*verb, "docs", *link, date), "x-ms-documentdb-partitionkey", *pk)
		if *verb == "POST" {
			// A create is signed with its container's link and its body is not signed, so
			// each request can carry a new item: ids unique to this script, thread and
			// request, over 100 partition key values, padded to about 1 KB.
			fmt.Printf(createScript, strconv.FormatInt(time.Now().UnixNano(), 36))
		}
	case "serve":
		body := []byte(`{"id":"item-1","pk":"k1","pad":"` + strings.Repeat("x", 960) + `"}`)
		http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
			// A feed (odd segment count, e.g. dbs) is typed by its last segment and linked to
			// its parent; a resource by the second to last, linked to itself. Accepting both
			// lets the bench tool's raw client set up against this server too.
			segs := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
			typ, link := segs[len(segs)-1], strings.Join(segs[:len(segs)-1], "/")
			if len(segs)%2 == 0 {
				typ, link = segs[len(segs)-2], strings.Join(segs, "/")
			}
			date := r.Header.Get("x-ms-date")
			if r.Header.Get("Authorization") != key.Authorization(r.Method, typ, link, date) {
				http.Error(w, `{"code":"Unauthorized","message":"bad signature"}`, http.StatusUnauthorized)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("x-ms-request-charge", "1")
			if r.Method == http.MethodPost {
				w.WriteHeader(http.StatusCreated)
			}
			w.Write(body)
		})
		fmt.Fprintln(os.Stderr, "bare: serving on", *addr)
		if err := http.ListenAndServe(*addr, nil); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	default:
		fmt.Fprintln(os.Stderr, "usage: bare serve|sign [flags]")
		os.Exit(2)
	}
}
