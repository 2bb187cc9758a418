// Package partition is one physical partition: the owner of one contiguous range of effective
// partition keys of one container. It serves point reads and scans of its span directly from
// storage, and turns every write into a command that is fully decided (LSN, etag, timestamp,
// stored bytes, resulting statistics) before it is applied, so that applying is deterministic
// and could be replicated as is.
//
// Writes are funnelled through one goroutine per partition that decides commands in order and
// commits them in groups: one synced Pebble batch, hence one fsync, for every command that
// arrived while the previous group was syncing.
//
// It must never know about HTTP, the catalog of databases and containers, or other partitions.
package partition
