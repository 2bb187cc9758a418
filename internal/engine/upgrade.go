package engine

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"

	"github.com/partita-db/partita/internal/catalog"
	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/storage"
)

// upgrade rewrites a database of layout 3 (storage.UpgradableFormat) in place to this build's,
// before the engine opens anything: container by container (partition.UpgradeContainer), each
// recorded as done in storage.UpgradeKey in its last, synced batch, then one synced batch that
// drops what is left of layout 3, forgets the progress and stamps the new layout. A crash at
// any point leaves the database in layout 3 with some containers done and part of another,
// and the next start carries on from there; nothing is converted twice.
func upgrade(db *storage.DB, log *slog.Logger, o partition.UpgradeOptions) error {
	if db.Format() != storage.UpgradableFormat {
		return fmt.Errorf("%w: layout %d", storage.ErrFormat, db.Format())
	}
	recs, err := loadCatalog(catalog.NewLocal(db))
	if err != nil {
		return err
	}
	var done []uint32
	switch v, err := db.GetCopy(nil, storage.UpgradeKey()); {
	case err == nil:
		if err := json.Unmarshal(v, &done); err != nil {
			return fmt.Errorf("upgrade progress record: %w", err)
		}
	case !storage.IsNotFound(err):
		return err
	}
	log.Info("upgrading the storage layout in place", "from", storage.UpgradableFormat, "to", storage.FormatVersion,
		"containers", len(recs.containers), "already done", len(done))
	for _, c := range recs.containers {
		if slices.Contains(done, c.Num) {
			continue
		}
		ranges := make([]partition.UpgradeRange, len(c.Ranges))
		for i, r := range c.Ranges {
			er, err := r.epkRange()
			if err != nil {
				return fmt.Errorf("container %q range %d: %w", c.ID, r.ID, err)
			}
			ranges[i] = partition.UpgradeRange{ID: r.ID, Range: er, Parents: r.Parents}
		}
		err := partition.UpgradeContainer(db, c.Num, ranges, c.Indexing, o, func(b *storage.Batch) error {
			progress, err := json.Marshal(append(slices.Clone(done), c.Num))
			if err != nil {
				return err
			}
			return b.Set(storage.UpgradeKey(), progress)
		})
		if err != nil {
			return fmt.Errorf("upgrading container %q: %w", c.ID, err)
		}
		done = append(done, c.Num)
		log.Info("container upgraded", "container", c.ID)
	}
	b := db.NewBatch()
	defer b.Close()
	for _, span := range storage.V3.Spans() {
		if err := b.DeleteRange(span.Start, span.End); err != nil {
			return err
		}
	}
	if err := b.Delete(storage.UpgradeKey()); err != nil {
		return err
	}
	if err := db.FinishUpgrade(b); err != nil {
		return err
	}
	log.Info("storage layout upgraded", "to", storage.FormatVersion)
	return nil
}
