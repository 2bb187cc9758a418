package cqlexec

import (
	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/engine"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/value"
)

// A write over several partitions (IN on the partition key, a batch) applies each
// partition's part as one command, one after the other. Some failures depend on the rows
// found (a list index out of bounds, a row grown past the item size limit): were one met
// by the second part, the first would already be applied, and a failed statement would have
// changed the data. So such a write first runs every part against the committed rows
// without staging anything (dryRun), and applies none when one would fail, as Cassandra,
// which reads what its list operations need before it applies anything, fails it whole.
// Between the check and the writes another client may change the rows; that part then
// fails alone, as it would under Cassandra's own race.

// rowTxn is what mutate reads and writes: the engine's transaction on one logical
// partition, or a dryTxn.
type rowTxn interface {
	Get(id string) (doc []byte, ok bool, err error)
	Scan(lo, hi string, reverse bool, fn func(id string, doc []byte) bool) error
	Put(id string, doc []byte)
	Delete(id string)
}

// dryTxn reads the committed rows of the logical partition at e and checks the rows put
// as the engine would, keeping nothing.
type dryTxn struct {
	cont   *engine.Container
	e      epk.EPK
	charge float64
	err    error // the first row put that the engine would refuse
}

func (d *dryTxn) Get(id string) (doc []byte, ok bool, err error) {
	err = d.Scan(id, idAfter(id), false, func(got string, b []byte) bool {
		if got == id {
			doc, ok = append([]byte(nil), b...), true
		}
		return false
	})
	return doc, ok, err
}

func (d *dryTxn) Scan(lo, hi string, reverse bool, fn func(id string, doc []byte) bool) error {
	end := engine.RowPos{EPK: d.e + "\x00"}
	if hi != "" {
		end = engine.RowPos{EPK: d.e, ID: hi}
	}
	charge, err := d.cont.ScanRows(engine.RowPos{EPK: d.e, ID: lo}, end, reverse, func(_ epk.EPK, id string, doc []byte) bool {
		return fn(id, doc)
	})
	d.charge += charge
	return err
}

func (d *dryTxn) Put(id string, doc []byte) {
	if d.err != nil {
		return
	}
	v, err := value.Parse(doc)
	if err == nil {
		_, err = document.Row(v)
	}
	d.err = err
}

func (d *dryTxn) Delete(string) {}

// dryRun runs muts, the parts of one write, without applying them: the first error one of
// them would meet, and the charge of the reads.
func (x *Executor) dryRun(t *table, muts []*mutation) (float64, error) {
	cont, err := x.engineTable(t)
	if err != nil {
		return 0, err
	}
	total := 0.0
	for _, m := range muts {
		d := &dryTxn{cont: cont, e: m.pl.epk}
		_, err := x.mutate(t, d, m)
		total += d.charge
		if err == nil {
			err = d.err
		}
		if err != nil {
			return total, err
		}
	}
	return total, nil
}
