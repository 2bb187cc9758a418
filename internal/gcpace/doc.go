// Package gcpace sets the Go garbage collector's target after every collection from the heap
// that collection found live.
//
// A server's Go heap holds little that lives long: items and the block cache are outside it,
// and what a request allocates is garbage when it is answered. A fixed GC percentage then
// makes the heap goal tiny (a few MiB live gives a goal of tens of MiB) and the collector
// runs several times a second under load, each time for a millisecond or two of marking;
// at a few tens of thousands of point reads a second that is enough to show in the p99.
// Pacing by a fixed headroom instead lets the heap grow by the same number of bytes between
// collections whatever is live, while a floor percentage keeps a large live heap (a big
// query's results) from being collected more often than a fixed percentage would.
package gcpace
