package engine

import (
	"context"
	"time"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/ru"
	"github.com/partita-db/partita/internal/script"
)

// ProcedureOptions qualify the execution of a stored procedure.
type ProcedureOptions struct {
	// PartitionKey is the logical partition the procedure runs over, as one transaction.
	PartitionKey epk.Key
	// Log collects what the script writes with console.log (x-ms-documentdb-script-enable-logging).
	Log bool
	// Headers are the client's request headers, as ItemOptions.Headers.
	Headers map[string]string
	// Context is the request's, as ItemOptions.Context.
	Context context.Context
}

// ctx is o's Context, or the background one.
func (o *ProcedureOptions) ctx() context.Context {
	if o.Context == nil {
		return context.Background()
	}
	return o.Context
}

// ProcedureResult is the outcome of a stored procedure. Charge is set on failures too.
type ProcedureResult struct {
	// Body is the JSON the script set with getResponse().setBody; nil when it set none.
	Body []byte
	// Log is what the script logged, when ProcedureOptions.Log asked for it.
	Log         string
	Charge      float64
	LSN         uint64
	PartitionID uint32
}

// ExecuteProcedure runs the stored procedure id with args (a JSON array) over one logical
// partition, as one transaction: its reads see its writes, and the writes commit together
// when it returns or not at all when it fails.
func (c *Container) ExecuteProcedure(id string, args []byte, o ProcedureOptions) (ProcedureResult, error) {
	s, err := c.script(ProcedureScript, id)
	if err != nil {
		return ProcedureResult{Charge: ru.Miss()}, err
	}
	e, err := c.EPK(c.undefinedIfNone(o.PartitionKey))
	if err != nil {
		return ProcedureResult{Charge: ru.Miss()}, err
	}
	return c.callsAt(e).procedure(s, e, id, args, o)
}

// transact runs fn in a transaction over the logical partition e, holding it against
// other writers, and commits what fn staged when it succeeds. The charge is the reads and
// queries fn made, its time, and the commit's writes; all of it is spent from the partition's
// budget, also when fn failed and nothing was written.
func (c *Container) transact(ctx context.Context, e epk.EPK, fn func(t *txn) error) (x committed, charge float64, err error) {
	run := func() (float64, error) {
		return retryConflicts(func() (float64, error) {
			var ch float64
			x, ch, err = c.transactOnce(ctx, e, fn)
			return ch, err
		})
	}
	charge, err = run()
	if err == script.ErrMemoryBeside {
		// Its script was stopped when the heap outgrew its budget while other scripts ran
		// beside it, and any of them may have grown it: nothing was written, and it runs
		// again apart from other such reruns, where only the one that spent the memory is
		// stopped again.
		err = c.e.scripts.Alone(func() error {
			more, err := run()
			charge += more
			return err
		})
	}
	return x, charge, err
}

func (c *Container) transactOnce(ctx context.Context, e epk.EPK, fn func(t *txn) error) (committed, float64, error) {
	t := c.newTxn(ctx, e)
	c.splitMu.RLock()
	p := c.routes.Load().lookup(e)
	if p == nil {
		c.splitMu.RUnlock()
		return committed{}, 0, errNotHere()
	}
	t.read = readFrom(p)
	err := c.admit(ru.PriorityOf(ctx), p)
	c.splitMu.RUnlock()
	if err != nil {
		return committed{}, 0, err // a throttled request costs nothing
	}
	c.locks.lockScript(e)
	defer c.locks.unlockScript(e)
	began := time.Now()
	err = fn(t)
	work := t.charge + ru.Script(time.Since(began))
	spendItem(work, ru.PriorityOf(ctx), p, e)
	if err != nil {
		return committed{executed: executed{p: p}}, work, err
	}
	x, err := t.commit()
	if x.p == nil {
		x.p = p
	}
	return x, work + x.charge, err
}
