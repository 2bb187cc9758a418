package replica

import (
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/replication"
	"github.com/partita-db/partita/internal/storage"
)

// Of is partition p as the state machine of its replica. Close closes p.
func Of(p *partition.Partition) replication.StateMachine { return machine{p} }

type machine struct{ p *partition.Partition }

func (m machine) Applied() (uint64, uint64, []byte) { return m.p.AppliedIndex() }
func (m machine) Spans() []storage.Span             { return m.p.Spans() }
func (m machine) Leader(leading bool, term uint64)  { m.p.SetLeader(leading, term) }
func (m machine) Close()                            { m.p.Close() }
func (m machine) Discard()                          { m.p.Discard() }

func (m machine) Apply(ents []replication.Committed) error {
	les := make([]partition.LogEntry, len(ents))
	for i, e := range ents {
		les[i] = partition.LogEntry{Index: e.Index, Term: e.Term, Data: e.Data, Group: e.Desc}
	}
	return m.p.ApplyLog(les)
}
