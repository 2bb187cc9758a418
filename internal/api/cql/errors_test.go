package cql

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/partita-db/partita/internal/cql"
	"github.com/partita-db/partita/internal/cqlexec"
	"github.com/partita-db/partita/internal/engine"
	"github.com/partita-db/partita/internal/fault"
)

func containsRetry(msg string, d time.Duration) bool {
	return strings.Contains(msg, fmt.Sprintf("RetryAfterMs=%d", d.Milliseconds()))
}

func TestErrorMapping(t *testing.T) {
	_, syntax := cql.Parse("SELEC")
	id := []byte("0123456789abcdef")
	one := primitive.ConsistencyLevelOne
	cases := []struct {
		name string
		err  error
		r    request
		want message.Error
	}{
		{"syntax", syntax, request{}, &message.SyntaxError{ErrorMessage: fault.From(syntax).Message}},
		{"invalid", cql.Invalid(fault.Pos{}, "no such column"), request{}, &message.Invalid{ErrorMessage: "no such column"}},
		{"already exists", &cqlexec.AlreadyExistsError{Keyspace: "ks", Table: "t", Err: fault.New(fault.Conflict, "Cannot add already existing table \"t\" to keyspace \"ks\"")}, request{},
			&message.AlreadyExists{ErrorMessage: "Cannot add already existing table \"t\" to keyspace \"ks\"", Keyspace: "ks", Table: "t"}},
		{"forbidden", fault.New(fault.Forbidden, "read-only"), request{}, &message.Unauthorized{ErrorMessage: "read-only"}},
		{"unavailable", fault.New(fault.Unavailable, "shutting down"), request{consistency: primitive.ConsistencyLevelQuorum},
			&message.Unavailable{ErrorMessage: "shutting down", Consistency: primitive.ConsistencyLevelQuorum, Required: 1, Alive: 0}},
		{"gone when executing", fault.New(fault.Gone, "schema changed"), request{prepared: id},
			&message.Unprepared{ErrorMessage: "The schema changed since the statement was prepared; prepare it again", Id: id}},
		{"gone otherwise", fault.New(fault.Gone, "schema changed"), request{}, &message.Invalid{ErrorMessage: "schema changed"}},
		{"not found", fault.New(fault.NotFound, "no keyspace"), request{}, &message.Invalid{ErrorMessage: "no keyspace"}},
		{"conflict", fault.New(fault.Conflict, "c"), request{}, &message.Invalid{ErrorMessage: "c"}},
		{"too large", fault.New(fault.TooLarge, "big"), request{}, &message.Invalid{ErrorMessage: "big"}},
		{"partition full", fault.New(fault.PartitionFull, "full"), request{}, &message.Invalid{ErrorMessage: "full"}},
		{"precondition", fault.New(fault.PreconditionFailed, "p"), request{}, &message.Invalid{ErrorMessage: "p"}},
		{"read timeout", fault.New(fault.Timeout, "slow"), request{consistency: one, read: true},
			&message.ReadTimeout{ErrorMessage: "slow", Consistency: one, BlockFor: 1}},
		{"write timeout", fault.New(fault.Timeout, "slow"), request{consistency: one, writeType: primitive.WriteTypeUnloggedBatch},
			&message.WriteTimeout{ErrorMessage: "slow", Consistency: one, BlockFor: 1, WriteType: primitive.WriteTypeUnloggedBatch}},
		{"write of unknown outcome", fmt.Errorf("insert: %w", engine.ErrAmbiguous), request{consistency: one},
			&message.WriteTimeout{ErrorMessage: fault.From(engine.ErrAmbiguous).Message, Consistency: one, BlockFor: 1, WriteType: primitive.WriteTypeSimple}},
		{"internal", fault.New(fault.Internal, "oops"), request{}, &message.ServerError{ErrorMessage: "oops"}},
		{"plain error", fmt.Errorf("disk: %w", fmt.Errorf("io")), request{}, &message.ServerError{ErrorMessage: "disk: io"}},
	}
	for _, tc := range cases {
		if got := errorMessage(tc.err, tc.r); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %#v, want %#v", tc.name, got, tc.want)
		}
	}
	o, ok := errorMessage(fault.Throttle(1500*time.Millisecond), request{}).(*message.Overloaded)
	if !ok || !containsRetry(o.ErrorMessage, 1500*time.Millisecond) {
		t.Errorf("throttled: %v, want OVERLOADED with RetryAfterMs=1500", o)
	}
}
