// Package web is the explorer: a browser UI for a Partita account, served by `partita serve`
// at /_explorer/ on the Cosmos listener. It lists databases, containers and items, runs
// queries, draws each container's partitions live (the EPK ranges to scale, their storage,
// request units and throttling, and a timeline of normalized RU consumption), shows the
// partition-key advice, and on a cluster shows its nodes and partitions' groups and drains a
// node (through Partita's signed management API, /_partita/cluster).
//
// The assets under static/ are plain HTML, CSS and ES modules written by hand and embedded in
// the binary: there is no build step, and the page makes no request outside its own origin.
//
// The package serves only those static files, to anyone; it never sees data. The page asks
// for the account key, keeps it in the tab's sessionStorage, and signs every Cosmos REST
// request itself (WebCrypto HMAC-SHA256, the master-key scheme of internal/masterkey), so the
// key is never sent, put in a URL or logged, and the gateway's own authentication decides
// what can be read. It must never grow an endpoint of its own that returns data.
package web
