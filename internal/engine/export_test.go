package engine

import (
	"log/slog"

	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/storage"
)

// Upgrade runs the layout upgrade on db with o, for tests that cut it short.
func Upgrade(db *storage.DB, o partition.UpgradeOptions) error {
	return upgrade(db, slog.New(slog.DiscardHandler), o)
}
