package engine

import (
	"errors"

	"github.com/partita-db/partita/internal/partition"
	"github.com/partita-db/partita/internal/status"
)

type partitionDoc = partition.Doc

func asStatus(err error, target **status.Error) bool { return errors.As(err, target) }
