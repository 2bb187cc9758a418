package partition

import (
	"encoding/binary"
	"errors"

	"github.com/partita-db/partita/internal/storage"
)

// A vector index whose graph does not cover the partition (an index added to a partition that
// holds items, the children of a split, a data directory from before vector indexes) is built
// online, by the same driver as a range index rebuild (ReindexStep, once the range index is
// settled), a bounded step at a time:
//
//   - The first step writes the build record (cursor 0) and inserts nothing it cannot vouch
//     for; from then on, every write maintains the graph as if it were complete.
//   - Each step reads the items from the cursor on, in creation order, off the writer; on the
//     writer it reads their current versions again and decides an entry that inserts their
//     vectors, so that an item written meanwhile goes in as it is now. The cursor moves past
//     them.
//   - The step that finds no item left after the cursor, in a snapshot taken while the build
//     record already existed, ends the build: it writes the complete marker, and searches use
//     the graph from then on.
//
// Why it is exact: an item created before the build record is passed by the cursor; one
// created after it is inserted by its write; and every write after the record keeps the
// graph current for its items, passed or not (a step does not insert again a vector the
// graph already holds). Each step is an entry of the partition's log, so every replica applies
// the same inserts and holds the same graph.

// encode is the build record's value: uvarint(cursor) varint(done).
func (b *graphBuild) encode() []byte {
	return binary.AppendVarint(binary.AppendUvarint(nil, b.cursor), b.done)
}

func decodeGraphBuild(v []byte) (*graphBuild, error) {
	cursor, n := binary.Uvarint(v)
	if n <= 0 {
		return nil, errBadBuildRecord
	}
	done, m := binary.Varint(v[n:])
	if m <= 0 || n+m != len(v) {
		return nil, errBadBuildRecord
	}
	return &graphBuild{cursor: cursor, done: done}, nil
}

// vectorBuildItems bounds the items of a build step. Its inserts are applied on the
// partition's writer, about a millisecond each on a graph of 100,000 vectors: the bound keeps
// the writes queued behind a step waiting tens of milliseconds at most.
const vectorBuildItems = 32

var errBadBuildRecord = errors.New("partition: malformed vector index build record")

// pendingGraph returns the first vector index of the partition's policy whose graph is not
// complete, and its state; ok is false when every graph is.
func (p *Partition) pendingGraph() (spec vectorSpec, m graphMirror, ok bool, err error) {
	if p.vectors == nil {
		return vectorSpec{}, graphMirror{}, false, nil
	}
	for _, s := range vectorSpecs(p.vectors, p.ix.Load().pol) {
		if m, err = p.graph(s.path, false); err != nil || !m.complete {
			return s, m, true, err
		}
	}
	return vectorSpec{}, graphMirror{}, false, nil
}

// vectorBuildProgress reports the items a graph build in flight has passed; pending is false
// when every graph is complete. A failure to read the state reports a build pending, which
// the next step then reports.
func (p *Partition) vectorBuildProgress() (done int64, pending bool) {
	_, m, ok, err := p.pendingGraph()
	if err != nil {
		return 0, true
	}
	if ok && m.build != nil {
		done = m.build.done
	}
	return done, ok
}

// buildVectors advances the build of the first incomplete graph by one step of at most
// maxItems items (and at most vectorBuildItems) or maxBytes bytes of documents. It reports
// whether every graph is complete after it, and the bytes read.
func (p *Partition) buildVectors(maxItems, maxBytes int) (finished bool, read int, err error) {
	maxItems = min(maxItems, vectorBuildItems)
	spec, _, ok, err := p.pendingGraph()
	if !ok || err != nil {
		return !ok, 0, err
	}
	type passed struct {
		epk string
		seq uint64
	}
	var items []passed
	var from, next uint64
	var done int64
	started, end := false, true
	// The snapshot says where the build stands (the mirror may be ahead of it) and which
	// items it passes next.
	snap := p.db.NewSnapshot()
	err = func() error {
		defer snap.Close()
		v, err := snap.Get(nil, storage.VectorKey(nil, p.container, p.id, spec.path, storage.VectorBuild, 0))
		switch {
		case err == nil:
			b, err := decodeGraphBuild(v)
			if err != nil {
				return err
			}
			started, from, done = true, b.cursor, b.done
		case !storage.IsNotFound(err):
			return err
		}
		docs, err := p.docReader(snap)
		if err != nil {
			return err
		}
		defer docs.close()
		docs.live = liveness{} // expired items hold their vectors until the reaper deletes them
		next = from
		return p.scanOrder(snap, docs, from, func(e []byte, seq uint64) (bool, error) {
			if len(items) >= maxItems || read >= maxBytes {
				end = false
				return false, nil
			}
			next = seq + 1
			d, ok, err := docs.get(e, seq)
			if ok {
				read += len(d.json)
				items = append(items, passed{string(e), seq})
			}
			return err == nil, err
		})
	}()
	if err != nil {
		return false, read, err
	}
	err = p.propose(func(_ state, ix *indexState) (*entry, error) {
		m, err := p.graph(spec.path, false)
		if err != nil {
			return nil, err
		}
		_, kept := p.vectorSpecAt(ix.pol, spec.path)
		switch {
		case m.complete || !kept:
			return nil, nil // ended by a write to the empty partition, or dropped
		case started != (m.build != nil) || started && m.build.cursor != from:
			return nil, nil // the index was dropped and added again since the snapshot
		}
		// Only a snapshot taken after the build record was committed holds every item that
		// writes did not insert: the first step cannot end the build.
		step := &vectorBuildStep{Path: spec.path, Started: started, From: from, Cursor: next, Done: done, End: end && started}
		var key []byte
		for _, x := range items {
			d, ok, err := p.committedDoc(&key, x.epk, x.seq)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue // deleted since: its delete removed it from the graph, if there
			}
			step.Done++
			if vec, ok := spec.vectorOf(d.json); ok {
				step.Items = append(step.Items, builtVector{Seq: x.seq, Vec: vec})
			}
		}
		return &entry{kind: entryVectorBuild, build: step}, nil
	})
	if err != nil {
		return false, read, err
	}
	_, pending := p.vectorBuildProgress()
	return !pending, read, nil
}

// stageVectorBuild inserts a step's vectors into the graph over its path and records the
// build's progress, or its end. A step whose graph the policy no longer keeps, that a write
// already made complete, or that finds the build elsewhere than it was decided from, does
// nothing.
func (a *applyBatch) stageVectorBuild(s *vectorBuildStep) error {
	gs, err := a.graphs()
	if err != nil {
		return err
	}
	for _, g := range gs {
		if g.spec.path != s.Path || g.complete || (g.build != nil) != s.Started || s.Started && g.build.cursor != s.From {
			continue
		}
		for _, x := range s.Items {
			if err := g.put(x.Seq, x.Vec, true); err != nil {
				return err
			}
		}
		if err := g.maintain(); err != nil {
			return err
		}
		if s.End {
			g.markComplete()
		} else {
			g.build, g.built = &graphBuild{cursor: s.Cursor, done: s.Done}, true
		}
	}
	return nil
}
