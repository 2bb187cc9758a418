package partition

import (
	"bytes"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/partita-db/partita/internal/storage"
	"github.com/partita-db/partita/internal/value"
)

// Order counts let an ORDER BY page learn whether the index gives the whole order at a path
// (every item has one value there, and not an array or object: see indexOrdered) without
// passing the path's entries, so that a page costs what it returns. They are kept in memory
// for the paths ORDER BY reads, like the expiry index: counted once from storage the first
// time a page asks, then kept up to date by every write the partition applies. Nothing of
// them is stored.
//
// A count is exact or absent. A write's index terms say exactly which entries it removes and
// adds only while the index follows one policy (indexState.settled). So a write staged while
// a rebuild runs, and every entry that changes index entries other than a write (a policy
// change, a rebuild's step, a split's commit), drops every count (dropCounts); the next page
// counts again. Each count is kept with the LSN it holds as of, and a page reads the count of
// its own snapshot: one of a write whose effects have not run yet, or older than the counts
// remember, is counted from storage.

// orderCounts are a partition's counts of index entries, by path.
type orderCounts struct {
	// on is set while a path is counted or being counted: writes look only then.
	on atomic.Bool
	mu sync.Mutex
	// gen is bumped by each drop: a count begun before it is not kept.
	gen   uint64
	paths []*pathCount // at most maxCountedPaths
	used  uint64       // clock of lastUse
}

// maxCountedPaths bounds the paths counted in a partition; past it, the path least recently
// used is forgotten.
const maxCountedPaths = 8

// countHistory bounds how many changes of a path's counts are remembered, for pages reading
// a snapshot older than the last write.
const countHistory = 32

// pathCount is the count of one path's entries.
type pathCount struct {
	prefix []byte // esc(path): the path's entries are those with a value after it
	// counting is set from begin until finish: the count is being read from a snapshot, and
	// deltas are what the writes noted since begin changed.
	counting bool
	deltas   []countAt
	// at are the counts since each LSN that changed them, oldest first (at least one when
	// not counting); through is the last LSN they hold as of: the last write noted, or the
	// snapshot they were read from.
	at      []countAt
	through uint64
	lastUse uint64
}

// countAt is a path's entries as of lsn: values are those of a value (null, a boolean, a
// number or a string), others those of an array or object. As a delta, what write lsn changed.
type countAt struct {
	lsn            uint64
	values, others int64
}

// composite is the first byte of the entries of arrays and objects (value.OrderedMarker),
// above every value's.
var composite = value.OrderedMarker(value.Array)

// count adds by to d for each of terms that is an entry of the path whose escaped form is
// prefix (as countEntries finds them), to values or others by its value's first byte.
func (d *countAt) count(prefix []byte, terms [][]byte, by int64) {
	for _, t := range terms {
		switch {
		case len(t) <= len(prefix) || !bytes.HasPrefix(t, prefix) || t[len(prefix)] == 0xFF:
		case t[len(prefix)] < composite:
			d.values += by
		default:
			d.others += by
		}
	}
}

// lookup returns the counts of prefix's entries as of lsn, when they are kept.
func (c *orderCounts) lookup(prefix []byte, lsn uint64) (values, others int64, ok bool) {
	if !c.on.Load() {
		return 0, 0, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	pc := c.find(prefix)
	if pc == nil || pc.counting || lsn > pc.through || lsn < pc.at[0].lsn {
		return 0, 0, false
	}
	c.used++
	pc.lastUse = c.used
	i := len(pc.at) - 1
	for pc.at[i].lsn > lsn {
		i--
	}
	return pc.at[i].values, pc.at[i].others, true
}

func (c *orderCounts) find(prefix []byte) *pathCount {
	for _, pc := range c.paths {
		if bytes.Equal(pc.prefix, prefix) {
			return pc
		}
	}
	return nil
}

// counting is a count begun by begin, for finish.
type counting struct {
	pc   *pathCount
	gen  uint64
	done bool // finished or abandoned
}

// begin starts counting prefix's entries, unless they are counted or being counted already
// (nil): from now, the writes noted record what they change. The caller reads the count from
// a snapshot taken after begin and hands it to finish, or abandons it.
func (c *orderCounts) begin(prefix []byte) *counting {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.find(prefix) != nil {
		return nil
	}
	if len(c.paths) == maxCountedPaths {
		old := -1
		for i, pc := range c.paths {
			if !pc.counting && (old < 0 || pc.lastUse < c.paths[old].lastUse) {
				old = i
			}
		}
		if old < 0 {
			return nil
		}
		c.paths = append(c.paths[:old], c.paths[old+1:]...)
	}
	c.used++
	pc := &pathCount{prefix: prefix, counting: true, lastUse: c.used}
	c.paths = append(c.paths, pc)
	c.on.Store(true)
	return &counting{pc: pc, gen: c.gen}
}

// finish keeps the count k began, read from a snapshot as of lsn (values and others), with
// what the writes noted after lsn changed. A nil k, or one finished already, does nothing.
func (c *orderCounts) finish(k *counting, lsn uint64, values, others int64) {
	c.end(k, true, lsn, values, others)
}

// abandon drops the count k began, unless it is nil or finished.
func (c *orderCounts) abandon(k *counting) { c.end(k, false, 0, 0, 0) }

func (c *orderCounts) end(k *counting, ok bool, lsn uint64, values, others int64) {
	if k == nil || k.done {
		return
	}
	k.done = true
	c.mu.Lock()
	defer c.mu.Unlock()
	pc := k.pc
	if !ok || k.gen != c.gen {
		c.remove(pc)
		return
	}
	noted := pc.through
	pc.counting = false
	pc.at = []countAt{{lsn: lsn, values: values, others: others}}
	for _, d := range pc.deltas {
		if d.lsn > lsn { // the snapshot holds the others
			pc.add(d)
		}
	}
	pc.deltas = nil
	pc.through = max(noted, lsn)
}

func (c *orderCounts) remove(pc *pathCount) {
	for i, x := range c.paths {
		if x == pc {
			c.paths = append(c.paths[:i], c.paths[i+1:]...)
			break
		}
	}
	c.on.Store(len(c.paths) > 0)
}

// add appends the counts as d, what write d.lsn changed, leaves them.
func (pc *pathCount) add(d countAt) {
	if d.values == 0 && d.others == 0 {
		return
	}
	last := pc.at[len(pc.at)-1]
	if len(pc.at) == countHistory {
		pc.at = append(pc.at[:0], pc.at[1:]...)
	}
	pc.at = append(pc.at, countAt{lsn: d.lsn, values: last.values + d.values, others: last.others + d.others})
}

// drop forgets every count, and every count being read.
func (c *orderCounts) drop() {
	// A count begun after this load returns false reads a snapshot taken after it, so after
	// the entry that drops it committed (a drop's second call is an effect of the entry).
	if !c.on.Load() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.paths = nil
	c.on.Store(false)
}

// note records what cmd, a write just committed, changed in the counted paths' entries.
// Writes are noted in LSN order, each once.
func (c *orderCounts) note(cmd *Command) {
	if !c.on.Load() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := 0; i < len(c.paths); i++ {
		pc := c.paths[i]
		d := countAt{lsn: cmd.LSN}
		for j := range cmd.Changes {
			d.count(pc.prefix, cmd.Changes[j].IndexDel, -1)
			d.count(pc.prefix, cmd.Changes[j].IndexAdd, +1)
		}
		switch {
		case pc.counting:
			if d.values != 0 || d.others != 0 {
				pc.deltas = append(pc.deltas, d)
			}
			pc.through = cmd.LSN
		case cmd.LSN <= pc.through:
			// the snapshot the counts were read from holds it
		case cmd.LSN > pc.through+1:
			c.remove(pc) // a write was not noted: the counts can no longer be trusted
			i--
		default:
			pc.add(d)
			pc.through = cmd.LSN
		}
	}
}

// dropCounts forgets the partition's order counts for an entry that changes index entries
// other than as a write's terms say: once now, so that no snapshot holding the change reads a
// count from before it, and once when the entry is committed, for a count begun meanwhile
// from a snapshot that does not hold it.
func (a *applyBatch) dropCounts() {
	p := a.p
	p.counts.drop()
	a.effects = append(a.effects, p.counts.drop)
}

// verifyCounts makes every count taken from memory also read from storage (VerifyOrderCounts).
var verifyCounts atomic.Bool

// verifyCount panics when the count of prefix's entries in snap differs from values and
// others, what the counts kept in memory say as of lsn.
func (p *Partition) verifyCount(snap *storage.Snapshot, prefix []byte, lsn uint64, values, others int64) {
	v, o, err := countEntries(snap, p.container, p.id, prefix)
	if err == nil && (v != values || o != others) {
		panic(fmt.Sprintf("partition %d: order counts of %q as of LSN %d are %d and %d; storage holds %d and %d", p.id, prefix, lsn, values, others, v, o))
	}
}
