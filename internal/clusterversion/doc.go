// Package clusterversion decides what a cluster of mixed releases may use: the cluster's
// active version, in the way of CockroachDB's cluster versions and TiKV's feature gates.
//
// Every release knows the versions up to its own (Latest). What a release adds to the Raft
// log, the node-to-node protocol or the catalog is tied to the version that introduced it and
// is used only once the cluster's active version has reached that version; until then the
// node speaks as the release before it did. The active version is kept in the control plane,
// raised by any node once every node of the cluster runs a release that knows the next version,
// and never lowered: after it is raised, a node of an older release is refused (it would not
// understand what its peers now send).
//
//	g := clusterversion.NewGate(cp, log)   // cp: the control plane's side (ControlPlane)
//	go g.Run(ctx)                             // follows the active version, raises it when it may
//	if g.Enabled(clusterversion.StreamedSnapshots) { ... }
//
// Which nodes count: every live node, every node the control plane's directory of members
// lists, and every node that holds a replica of a partition; a node is at the version its
// record states, and at Base when its record states none (the releases before versions) or
// when it has no record at all (a node known only from a replica it holds). A drained node
// that holds nothing does not count: it is on its way out of the cluster.
//
// An upgrade is thus a rolling restart: stop one node, start the new release on its data
// directory, wait for it to be ready, go on with the next. The new features come into use
// when the last node runs the new release, with no further step. A downgrade is possible only
// before that moment.
package clusterversion
