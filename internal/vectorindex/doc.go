// Package vectorindex finds the vectors nearest to a query, for Cosmos DB's vector search:
// the VectorDistance function and the vector indexes flat, quantizedFlat and diskANN.
//
// # What it owns
//
// The package holds the algorithms and nothing else: the metrics, exact search, vector
// quantization, and an approximate nearest-neighbour graph in the style of DiskANN
// (Vamana, with FreshDiskANN's updates). It does not store anything, read items, parse
// queries or plan them. The caller — the partition's write path and query executor —
// keeps the graph's records in its own store, next to the items they index, and hands the
// index a Reader over them.
//
// # Scores
//
// Metric.Score is VectorDistance: Cosine similarity in [-1, 1] and DotProduct rank higher
// first, Euclidean distance ranks lower first (Metric.Better compares two scores). The
// cosine of a zero vector is 0, never NaN. Vectors of every dataType are held as float32
// and scored in double precision over those values; Convert turns a JSON array into one for
// the type (int8 and uint8 exactly, float16 rounded to half precision), rejecting values the
// type cannot hold. Walks and scans compare in single precision (kernel.go): only the
// candidates they find are scored exactly.
//
// # The three indexes
//
// flat — Flat scores every vector an iterator yields and keeps the k best in a bounded
// heap. It is exact, and the reference the others are measured against.
//
// quantizedFlat — the caller trains a Quantizer on a sample (Train; the bytes of its
// MarshalBinary are stored, UnmarshalQuantizer reads them back), stores each item's code
// (EncodeVector) and calls QuantizedFlat with an iterator over the codes: it keeps the
// RerankMultiplier·K candidates closest by quantized distance and re-scores them exactly
// with the full vectors that SearchOptions.Vector fetches. Codes made before a quantizer
// existed (EncodeVector with a nil quantizer) are raw float32 and stay valid.
//
// diskANN — an Index: a graph of Nodes (id, code, out-edges), searched greedily from an
// entry point with a candidate list of ListSize, then re-ranked like quantizedFlat.
//
// # Storage contract
//
// The graph lives in the caller's store as three kinds of record, which the index only
// ever sees through a Reader:
//
//   - one Node per vector, keyed by its id (a uint64 the caller chooses, such as an
//     item's internal id); MarshalNode and UnmarshalNode give a compact encoding (neighbour
//     ids delta-coded as varints);
//   - one Meta: the entry point and the node counts (Meta.MarshalBinary);
//   - the Quantizer, once trained (its MarshalBinary), which never changes afterwards.
//
// A mutation — Insert, Delete, Consolidate — reads through the Reader it is given and
// returns Changes: the whole records to put, the ids to delete, the new Meta if it
// changed, and the quantizer if this mutation trained it. It writes nothing. The caller
// writes all of a mutation's Changes atomically, in the same batch as the item write that
// caused it, so that the graph and the items never disagree after a crash.
//
// Every mutation must read the state that all earlier mutations left. When one batch
// holds several (a transactional batch, a bulk import, the item write of a replace),
// wrap the batch's view of the store in an Overlay, Apply each mutation's Changes to it
// as it is made, and write Overlay.Changes() — the merged result — to the batch:
//
//	o := vectorindex.NewOverlay(snapshotReader)
//	for _, it := range items {
//		ch, err := ix.Insert(o, it.id, it.vec)
//		if err != nil { ... }
//		o.Apply(ch)
//	}
//	write(batch, o.Changes()) // puts, deletes, meta, quantizer
//
// MemStore is an in-memory store implementing Reader and Scanner, with Apply: the model of
// what a persistent store does with Changes, and the store of the tests and benchmarks.
//
// # Concurrency
//
// An Index holds only its configuration and may be shared. Mutations of one graph are
// serialised by the caller (one writer per partition, as its write path already is); a
// mutation's Changes must be applied (or laid over the Reader of the next one) before the
// next mutation runs. Searches only read: any number may run at once, each on a Reader
// that stays consistent while it runs (a store snapshot). A search that sees a node
// pointing to a record that is gone skips the edge; it never fails for it.
//
// # The graph
//
// Insert searches the graph for the new vector (candidate list BuildListSize), chooses
// the new node's out-edges among the nodes the search expanded with RobustPrune (keep the
// closest candidate, drop those it covers by a factor Alpha, repeat, at most MaxDegree),
// and adds the reverse edge to each chosen neighbour. A neighbour whose list is full
// takes the newcomer only if none of its nearer neighbours covers it, and is then
// trimmed to a little under MaxDegree (by MaxDegree/8), so that its next few reverse
// edges cost nothing. Whenever a list is cut, a few slots (MaxDegree/8) go to its longest
// edges rather than its shortest: on tightly clustered data, where pruning rarely thins
// the lists, keeping only the shortest edges would cut every path between clusters. A
// newcomer that no neighbour takes is forced into its nearest neighbour's list, so that
// some edge leads to it. Replacing a vector is an Insert with an existing id.
//
// Delete turns a node into a tombstone: searches still pass through it but never return
// it. Consolidate (which needs a Scanner, as it looks for every edge into a tombstone)
// removes the tombstones and redirects each edge that led to one to the tombstone's
// nearest live neighbour, keeping every other edge; it also links again any live node
// that no edge leads to any more (trimming a full list strands about one node in a
// thousand). Its Changes cover every repaired node, so it is meant for a background job
// that runs when Meta.ShouldConsolidate says so (a tenth of the nodes are tombstones, or
// the graph grew by a tenth), not after each delete. If the entry point is deleted it
// keeps leading searches as a tombstone until Consolidate moves it to the nearest live
// node.
//
// # Quantization
//
// Graph traversal compares the float32 query with the codes in the nodes; the best
// candidates are then re-scored with the full vectors (SearchOptions.Vector, which the
// caller serves from the item store), so the results carry exact scores. A new graph
// stores raw float32 codes. When it holds TrainSize vectors, the insert that reaches the
// count trains a ScalarQuantizer (8 bits per dimension, a per-dimension range) on the
// vectors it reaches from the entry point, re-encodes them in the same Changes, and moves
// the entry point to their medoid; later inserts are quantized. Values outside the
// trained range are clamped, which only coarsens their approximate distances.
//
// # Parameters and defaults
//
//	Config.MaxDegree        R, out-edges per node              32
//	Config.BuildListSize    L of an insert's search            100 (Cosmos DB's indexingSearchListSize)
//	Config.Alpha            RobustPrune's factor               1.2
//	Config.TrainSize        vectors before quantizing          1,000 (negative: never)
//	SearchOptions.ListSize  L of a query's search              10·K (searchListSizeMultiplier 10)
//	SearchOptions.RerankMultiplier  candidates re-ranked       5·K (quantizedVectorListMultiplier 5)
//
// A larger ListSize raises recall and costs proportionally more reads and distances; a
// larger RerankMultiplier costs a full-vector read per extra candidate. MaxDegree and
// Alpha are fixed for the life of a graph.
package vectorindex
