package partition

import (
	"errors"

	"github.com/partita-db/partita/internal/fault"
)

// entryLog is where a partition's writer hands the entries it decided. commit returns once
// each entry is applied, with the reason of each one that was not (a refusal, or a failure).
type entryLog interface {
	commit(ents []*entry) []error
}

// localLog is a single node's log: the entries of one commit are staged into one batch, which
// is synced when any of them must be durable before it is answered. The batch is both their
// log and their application, so a single node pays one write and one sync for a group of
// commands, as it did before replication existed.
type localLog struct{ p *Partition }

func (l localLog) commit(ents []*entry) []error {
	p := l.p
	errs := make([]error, len(ents))
	a := p.newApplyBatch()
	staged, sync := 0, false
	for i, e := range ents {
		if err := a.stage(e); err != nil {
			if !isRefusal(err) {
				// The batch may hold part of the entry: drop it all, and stop.
				a.abandon()
				p.fail(err)
				for j := range errs {
					errs[j] = fault.New(fault.Unavailable, "The write could not be staged: %v", err)
				}
				return errs
			}
			errs[i] = errors.Unwrap(err)
			continue
		}
		staged++
		sync = sync || e.sync
	}
	if staged == 0 {
		a.abandon()
		return errs
	}
	if err := a.commit(sync); err != nil {
		for i := range errs {
			if errs[i] == nil {
				errs[i] = err
			}
		}
	}
	return errs
}

// isRefusal reports whether err is an entry refused before it wrote anything.
func isRefusal(err error) bool { return errors.As(err, new(*refusal)) }

// refusal is an entry refused at apply time: decided under a lease that is no longer held,
// after a command that was not applied, after a split's commit, or a split step that does not
// fit the state. It writes nothing; Unwrap is the reason, for the caller.
type refusal struct{ err error }

func (r *refusal) Error() string { return r.err.Error() }
func (r *refusal) Unwrap() error { return r.err }

// refuse wraps err as a refusal.
func refuse(err error) error { return &refusal{err} }
