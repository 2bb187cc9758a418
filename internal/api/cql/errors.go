package cql

import (
	"errors"
	"fmt"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/partita-db/partita/internal/cql"
	"github.com/partita-db/partita/internal/cqlexec"
	"github.com/partita-db/partita/internal/engine"
	"github.com/partita-db/partita/internal/fault"
)

// request is what the answer to a failed request depends on besides the error.
type request struct {
	consistency primitive.ConsistencyLevel
	// read says the statement is a SELECT (a timeout is a read timeout); writeType says, for
	// a write, what kind (a timeout is a write timeout of that type).
	read      bool
	writeType primitive.WriteType
	// prepared is the statement an EXECUTE or BATCH ran by id: a Gone error from the executor
	// means its schema changed, and the driver must prepare it again.
	prepared []byte
}

// errorMessage is the CQL ERROR for err.
func errorMessage(err error, r request) message.Error {
	var exists *cqlexec.AlreadyExistsError
	if errors.As(err, &exists) {
		return &message.AlreadyExists{ErrorMessage: fault.From(err).Message, Keyspace: exists.Keyspace, Table: exists.Table}
	}
	if cql.IsSyntax(err) {
		return &message.SyntaxError{ErrorMessage: fault.From(err).Message}
	}
	f := fault.From(err)
	msg, kind := f.Message, f.Kind
	if !r.read && engine.Ambiguous(err) {
		// The write may have been applied: a write timeout, which drivers do not retry
		// unless the statement is idempotent. UNAVAILABLE would tell them that nothing was
		// tried, and they would send it again.
		kind = fault.Timeout
	}
	switch kind {
	case fault.BadRequest, fault.NotFound, fault.Conflict, fault.TooLarge, fault.PartitionFull,
		fault.PreconditionFailed, fault.Aborted:
		return &message.Invalid{ErrorMessage: msg}
	case fault.Throttled:
		// RetryAfterMs as the Azure Cosmos DB Cassandra API writes it, which its retry
		// policies for the drivers read.
		return &message.Overloaded{ErrorMessage: fmt.Sprintf("%s RetryAfterMs=%d", msg, f.RetryAfter.Milliseconds())}
	case fault.Unauthorized, fault.Forbidden:
		// Signing in is checked by the handshake; a signed-in session lacking rights is
		// CQL's UNAUTHORIZED.
		return &message.Unauthorized{ErrorMessage: msg}
	case fault.Unavailable:
		return &message.Unavailable{ErrorMessage: msg, Consistency: r.consistency, Required: 1, Alive: 0}
	case fault.Gone:
		if r.prepared != nil {
			return &message.Unprepared{ErrorMessage: "The schema changed since the statement was prepared; prepare it again", Id: r.prepared}
		}
		return &message.Invalid{ErrorMessage: msg}
	case fault.Timeout:
		if r.read {
			return &message.ReadTimeout{ErrorMessage: msg, Consistency: r.consistency, Received: 0, BlockFor: 1}
		}
		wt := r.writeType
		if wt == "" {
			wt = primitive.WriteTypeSimple
		}
		return &message.WriteTimeout{ErrorMessage: msg, Consistency: r.consistency, Received: 0, BlockFor: 1, WriteType: wt}
	}
	return &message.ServerError{ErrorMessage: msg}
}

// unprepared answers an EXECUTE or a BATCH naming an id the cache does not hold, in Cassandra's
// words.
func unprepared(id []byte) message.Error {
	return &message.Unprepared{
		ErrorMessage: fmt.Sprintf("Prepared query with ID %x not found (either the query was not prepared on this host (maybe the host has been restarted?) or you have prepared too many queries and it has been evicted from the internal cache)", id),
		Id:           id,
	}
}
