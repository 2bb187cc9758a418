package partition

// A container created before the system paths (id and _ts) were always indexed, in a cluster
// upgraded node by node: a node of the earlier build that led one of its partitions during the
// upgrade may have written items without those entries, after the rebuild that adds them had
// passed the items, and nothing in the entries says so. Such a replica (Config.
// DistrustSystemPaths) does not trust the index for them (IndexTrusted). Once no node of the
// earlier build is left (the engine asks when the cluster's version says so), the leader
// proposes a recheck: every replica then rebuilds those entries once more, from the first
// item, as the rebuild at the upgrade did; once it went through every item, the index is
// checked, and trusted for them from then on, after restarts and in a split's children too.
//
//	err := p.RecheckSystemPaths()                     // a recheck entry, once
//	for { done, _, err := p.ReindexStep(n, b); ... }  // the rebuild, as for a policy change

// RecheckSystemPaths proposes the recheck of the system paths' entries, unless the partition
// needs none (it trusts them already, or a recheck is under way). Call it only once no node of
// a build that left them out can lead the partition.
func (p *Partition) RecheckSystemPaths() error {
	if !p.RecheckNeeded() {
		return nil
	}
	return p.propose(func(_ state, ix *indexState) (*entry, error) {
		if ix.checked || ix.recheck {
			return nil, nil
		}
		return &entry{kind: entryRecheck, sync: true}, nil
	})
}

// RecheckNeeded reports whether the partition distrusts its system paths' entries and no
// recheck has begun.
func (p *Partition) RecheckNeeded() bool {
	st := p.ix.Load()
	return p.mixedSystemPaths && !st.checked && !st.recheck
}

// stageRecheck begins the rebuild: the earlier policies gain the Legacy forms of every policy
// the entries may follow, and the cursor goes back to the first item.
func (a *applyBatch) stageRecheck() error {
	next, err := a.ix.olderSystemPaths()
	if err != nil {
		return err
	}
	c := *next
	c.recheck, c.recorded = true, true
	return a.setIndexState(&c)
}
