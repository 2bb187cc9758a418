// Package partition is one physical partition: the owner of one contiguous range of effective
// partition keys of one container. It serves point reads and scans of its span directly from
// storage, and turns every group of Operations it is asked to Execute into a Command that is
// fully decided (LSN, etag, timestamp, stored bytes, resulting statistics) before it is
// applied, so that applying is deterministic and could be replicated as is.
//
// Writes are funnelled through one goroutine per partition that decides commands in order and
// commits them in groups: one synced batch, hence one fsync, for every command that arrived
// while the previous group was syncing.
//
// Every change a command makes is logged in the command's batch (changelog.go): ReadLog serves
// the change feed from it, in LSN order, through the logs of the partition's ancestors after a
// split; PurgeLog applies retention to a container's logs.
//
// A partition also owns its own split (Split: start, backfill, commit or abort), so that the
// engine only decides when and where to split.
//
// It must never know about HTTP, the catalog of databases and containers, or other partitions,
// and it reaches storage only through package storage.
package partition
