// Package catalog keeps the account's catalog: one record per database, container and user,
// and the counters that number them, in a Backend. What the records mean (their JSON, the rules
// for changing them) is the engine's; this package knows them as kinds, numbers and bytes.
//
// There are two backends:
//
//   - Local keeps the records in the node's own Pebble, under the catalog key family
//     (storage.CatalogKey), as a single node always has. Its Stage adds a change to a batch
//     of the node's other writes, so that a split's new ranges or a container's deletion
//     commit in the same synced write as its data.
//   - Etcd keeps them in the cluster's etcd, under a prefix, for every node at once. A change
//     commits only if the catalog has not changed since the revision it was decided against
//     (Change.After), so that two nodes never both take the same number or overwrite each
//     other's record: the loser gets ErrStale, catches up (Watch) and decides again.
//
// Usage:
//
//	s := catalog.NewEtcd(client, "/partita/catalog/")
//	cur, err := s.Load()                        // the counters, every record, the revision
//	rev, err := s.Commit(catalog.Change{After: cur.Revision, Counters: counters,
//		Put: []catalog.Record{{Key: catalog.Key{Kind: catalog.Containers, Num: 7}, Value: rec}}})
//	for ev := range s.Watch(ctx, rev) { ... }  // every change after rev, in order
package catalog
