package engine

import (
	"fmt"
	"log/slog"

	"github.com/partita-db/partita/internal/storage"
)

// upgrade rewrites a database of an older layout in place.
func upgrade(db *storage.DB, log *slog.Logger) error {
	return fmt.Errorf("%w: layout %d is not upgraded yet", storage.ErrFormat, db.Format())
}
