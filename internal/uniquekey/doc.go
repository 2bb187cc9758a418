// Package uniquekey is a container's unique key policy: sets of paths whose values no two
// items of one logical partition may share. Cosmos users declare it at creation
// ({"uniqueKeys": [{"paths": ["/email"]}, {"paths": ["/first", "/last"]}]}) and can never
// change it.
//
//	pol, err := uniquekey.Parse(raw) // nil when the policy declares no key
//	entries := pol.Entries(item)     // one per key, what the partition stores and checks
//
// An entry is the key's number in the policy, then the values at its paths, encoded so that
// two entries are equal exactly when the values are (see entry.go). The partition package
// stores one per key per item, next to the item's logical partition, and refuses a write
// whose entry another item of that logical partition already holds.
//
// It must never know about storage, partitions or the wire: it only says what an item's
// unique values are.
package uniquekey
