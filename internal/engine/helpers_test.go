package engine

import (
	"errors"

	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/partition"
)

type partitionDoc = partition.Doc

func asStatus(err error, target **fault.Error) bool { return errors.As(err, target) }
