// Package document reads and writes the JSON of items on the write path without decoding
// whole documents: it validates a body, finds its id and partition key values, and stamps the
// system properties (_rid, _self, _etag, _attachments, _ts) onto the bytes that are stored.
//
// It owns the rules for item ids and system properties. It must never do I/O or know about
// partitions or storage: it is pure functions over bytes.
package document
