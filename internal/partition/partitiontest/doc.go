// Package partitiontest drives partitions through datadriven scenarios: stories of commands
// and their expected output, run against partitions opened directly on storage, without the
// engine. An Env holds one scenario's store and partitions; its Run handles one command:
//
//	env := partitiontest.New(t)
//	defer env.Close()
//	datadriven.RunTest(t, path, env.Run)
//
// Each command is handled in a file of its own (handler_<command>.go); items.go parses and
// prints item operations, and is shared with the multi-node harness. The commands:
//
//	open [max-logical-bytes=N] [unique=(KEY,...)] [fs=memory]
//	    a fresh store with one partition (id 1) owning the whole EPK space; unique gives the
//	    container unique keys, each written as its paths joined by + (/email or /first+/last);
//	    fs=memory keeps it in memory, where the power can be cut (see "Power loss" below)
//	create|replace|upsert|delete|read|mutate pk=P id=I [option...] [name=value...]
//	    one operation, Executed on the partition that owns P; see "Operations" below
//	batch
//	    the operations of the input, one a line, as one Execute
//	get pk=P id=I
//	    a point read (Partition.Read), outside the writer
//	race n=N <operation>
//	    N goroutines Execute the same operation at once; prints how many ended each way
//	hold name=H
//	    sends the writer a control request (Partition.Control) that blocks it until released:
//	    it runs at once when no other hold is pending, otherwise it queues behind what is
//	    queued; once it runs, every earlier group is committed and no later one has started
//	queue name=Q <operation> | queue name=Q batch (operations in the input)
//	queue name=Q bulk=N [requests=K] pk=P prefix=X
//	    Executes in the background while the writer is held; returns once the request is in
//	    the writer's queue, behind everything queued before it. bulk is K commands (one by
//	    default) of N creates each, of ids X<k>-<i> in P.
//	release name=H
//	    lets the running hold return, waits for the queued requests up to the next hold (or
//	    all of them) and prints their outcomes in queue order
//	stats
//	    every open partition's Stats and its logical partitions, each checked against a
//	    recount of the stored items
//	index path=/p
//	    every open partition's index entries at the top-level path p, in value order
//	    (IndexOrdered), checked against the items' current values and against IndexScan; and
//	    no entry of its index, at any path, may name an item outside its range
//	index-entries id=N [path=/p]
//	    the raw index entries in storage under partition id N, open or not
//	state-record id=N
//	    the persisted state record of partition id N
//	epks pks=(a,b,...)
//	    the partition keys in EPK order, with their EPKs
//	split-start (at=HEX | at-pk=P) left=L right=R
//	split-backfill | split-commit | split-abort
//	    drive a Split of the partition that owns the split point; split-commit opens the
//	    children as the engine does (Open with the child's id and range, start LSN 0)
//	restart [max-logical-bytes=N]
//	    closes the open partitions and the store and opens them again (with a new cap)
//	cut-power sync=K [keep=P seed=S] | crash [keep=P seed=S]
//	    power loss, on a store opened with fs=memory: see "Power loss" below
//	log
//	    every open partition's change log, all versions, as ReadLog passes it
//	unique-entries
//	    every unique key entry of the container in storage, as pk: key#(values) -> id, checked
//	    against the entries the open partitions' items should have
//
// # Operations
//
// Operations are written "kind pk=P id=I [if-match=ETAG] [as=NAME] [probe] [pad=N]
// [incr=F] [change-id=X] [change-pk=Y] [on=N] [field=value...]"; on=N sends it to partition N
// (open or closed by a split) instead of the one that owns P. The item's body is id, pk, the
// fields in order (a value that is JSON stays JSON, anything else becomes a string) and pad,
// a string of N x's. ETAG is *, $NAME (the etag saved by an earlier as=NAME) or a literal.
// Mutate sets the fields on the current item, adds 1 to field F (incr), or changes the id or
// partition key; with probe it also records the partition's committed LSN while the writer
// decides it.
//
// Items print as pk/id {fields}, without id, pk, pad and the system properties. Outcomes print
// as the command's LSN, or the fault kind of the error.
//
// # Power loss
//
// A store opened with fs=memory lives in a storage.MemFS, which knows what was synced; the
// power can be cut there at once or at a chosen sync:
//
//	cut-power sync=K [keep=P seed=S]
//	    the power goes just before the K-th sync from now (of the write-ahead log, or any
//	    file), which is lost with everything not synced before it; the commands that follow
//	    still run, on a store that no longer matters, until crash
//	crash [keep=P seed=S]
//	    the power goes now (or went at the armed cut): everything is closed, no split is
//	    aborted, and the store is reopened on what survived. Its partitions are those whose
//	    state record survived, among those the scenario knew (a split's commit writes its
//	    children's and removes its parent's in one batch), or partition 1 over the whole
//	    space when none did; printed as the restart command prints them, and checked to tile
//	    the EPK space
//
// Of the data written but not synced, each 4 KB block and directory entry survives with a
// probability of P percent (0 by default: exactly what was synced), drawn from seed S.
package partitiontest
