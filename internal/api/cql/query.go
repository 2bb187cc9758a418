package cql

import (
	"context"
	"errors"
	"sort"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/partita-db/partita/internal/cql"
	"github.com/partita-db/partita/internal/cqlexec"
	"github.com/partita-db/partita/internal/cqlvalue"
	"github.com/partita-db/partita/internal/engine"
	"github.com/partita-db/partita/internal/fault"
)

// staleRetries is how often a QUERY is prepared again when the schema changes between its
// preparation and its execution.
const staleRetries = 3

// query runs a QUERY: prepared for this one run, never cached.
func (c *conn) query(ctx context.Context, m *message.Query) message.Message {
	o, skip, r := options(m.Options)
	o.Context = ctx
	s := c.sessionNow()
	var res *cqlexec.Result
	for attempt := 1; ; attempt++ {
		p, err := c.srv.exec.Prepare(&s, m.Query)
		if err != nil {
			return errorMessage(err, r)
		}
		r.read, r.writeType = p.Kind == cqlexec.KindSelect || p.Kind == cqlexec.KindDescribe, primitive.WriteTypeSimple
		res, err = c.srv.exec.Execute(&s, p, o)
		if errors.Is(err, fault.Gone) && attempt < staleRetries {
			continue
		}
		if err != nil {
			return errorMessage(err, r)
		}
		break
	}
	return c.result(res, skip)
}

// prepare prepares a statement and keeps it for EXECUTE and BATCH on any connection.
func (c *conn) prepare(m *message.Prepare) message.Message {
	s := c.sessionNow()
	p, err := c.srv.exec.Prepare(&s, m.Query)
	if err != nil {
		return errorMessage(err, request{consistency: primitive.ConsistencyLevelOne})
	}
	params, err := columns(p.Params)
	if err != nil {
		return &message.ServerError{ErrorMessage: err.Error()}
	}
	cols, err := columns(p.Columns)
	if err != nil {
		return &message.ServerError{ErrorMessage: err.Error()}
	}
	c.srv.prepared.put(p)
	return &message.PreparedResult{
		PreparedQueryId:   p.ID[:],
		VariablesMetadata: &message.VariablesMetadata{PkIndices: p.PKIndices, Columns: params},
		ResultMetadata:    &message.RowsMetadata{ColumnCount: int32(len(cols)), Columns: cols},
	}
}

// execute runs a prepared statement.
func (c *conn) execute(ctx context.Context, m *message.Execute) message.Message {
	p := c.srv.prepared.get(m.QueryId)
	if p == nil {
		return unprepared(m.QueryId)
	}
	o, skip, r := options(m.Options)
	o.Context = ctx
	r.read, r.writeType, r.prepared = p.Kind == cqlexec.KindSelect || p.Kind == cqlexec.KindDescribe, primitive.WriteTypeSimple, m.QueryId
	s := c.sessionNow()
	res, err := c.srv.exec.Execute(&s, p, o)
	if err != nil {
		if errors.Is(err, fault.Gone) {
			c.srv.prepared.drop(p)
		}
		return errorMessage(err, r)
	}
	return c.result(res, skip)
}

var batchKinds = map[primitive.BatchType]struct {
	kind      cql.BatchKind
	writeType primitive.WriteType
}{
	primitive.BatchTypeLogged:   {cql.BatchLogged, primitive.WriteTypeBatch},
	primitive.BatchTypeUnlogged: {cql.BatchUnlogged, primitive.WriteTypeUnloggedBatch},
	primitive.BatchTypeCounter:  {cql.BatchCounter, primitive.WriteTypeCounter},
}

// batch runs a BATCH of statements given as text or by prepared id.
func (c *conn) batch(ctx context.Context, m *message.Batch) message.Message {
	bk, ok := batchKinds[m.Type]
	if !ok {
		return &message.ProtocolError{ErrorMessage: "Invalid batch type"}
	}
	r := request{consistency: m.Consistency, writeType: bk.writeType}
	o := cqlexec.Options{Context: ctx}
	if m.DefaultTimestamp != nil {
		o.Timestamp, o.HasTimestamp = *m.DefaultTimestamp, true
	}
	s := c.sessionNow()
	for attempt := 1; ; attempt++ {
		entries := make([]cqlexec.BatchEntry, len(m.Children))
		var byID []*cqlexec.Prepared
		for i, child := range m.Children {
			var p *cqlexec.Prepared
			if child.Id != nil {
				if p = c.srv.prepared.get(child.Id); p == nil {
					return unprepared(child.Id)
				}
				byID = append(byID, p)
			} else {
				var err error
				if p, err = c.srv.exec.Prepare(&s, child.Query); err != nil {
					return errorMessage(err, r)
				}
			}
			entries[i] = cqlexec.BatchEntry{Prepared: p, Values: values(child.Values)}
		}
		res, err := c.srv.exec.Batch(&s, bk.kind, entries, o)
		if errors.Is(err, fault.Gone) {
			if len(byID) > 0 {
				// The executor does not say which statement went stale: drop every one the
				// batch named by id, so that each EXECUTE or BATCH naming one is told to
				// prepare it again, and name the first.
				for _, p := range byID {
					c.srv.prepared.drop(p)
				}
				r.prepared = byID[0].ID[:]
				return errorMessage(err, r)
			}
			if attempt < staleRetries {
				continue
			}
		}
		if err != nil {
			return errorMessage(err, r)
		}
		return c.result(res, false)
	}
}

// options turns a QUERY's or EXECUTE's options into the executor's, whether to leave the
// metadata out of rows, and what an error answer needs. The serial consistency is ignored:
// a lightweight transaction is linearizable whatever it names.
func options(q *message.QueryOptions) (cqlexec.Options, bool, request) {
	r := request{consistency: primitive.ConsistencyLevelOne}
	if q == nil {
		return cqlexec.Options{Consistency: readLevel(r.consistency)}, false, r
	}
	r.consistency = q.Consistency
	o := cqlexec.Options{PageSize: int(q.PageSize), PagingState: q.PagingState, Consistency: readLevel(q.Consistency)}
	if q.PositionalValues != nil {
		o.Values = values(q.PositionalValues)
	} else if len(q.NamedValues) > 0 {
		o.Names = make([]string, 0, len(q.NamedValues))
		for n := range q.NamedValues {
			o.Names = append(o.Names, n)
		}
		sort.Strings(o.Names)
		o.Values = make([]cqlvalue.Value, len(o.Names))
		for i, n := range o.Names {
			o.Values[i] = value(q.NamedValues[n])
		}
	}
	if q.DefaultTimestamp != nil {
		o.Timestamp, o.HasTimestamp = *q.DefaultTimestamp, true
	}
	return o, q.SkipMetadata, r
}

func values(vs []*primitive.Value) []cqlvalue.Value {
	if vs == nil {
		return nil
	}
	out := make([]cqlvalue.Value, len(vs))
	for i, v := range vs {
		out[i] = value(v)
	}
	return out
}

func value(v *primitive.Value) cqlvalue.Value {
	switch {
	case v == nil || v.Type == primitive.ValueTypeNull:
		return cqlvalue.Value{Null: true}
	case v.Type == primitive.ValueTypeUnset:
		return cqlvalue.Value{Unset: true}
	}
	b := v.Contents
	if b == nil {
		b = []byte{}
	}
	return cqlvalue.Value{Bytes: b}
}

// readLevel is the Cosmos DB level a read at a driver's consistency level is served at: one
// replica's answer (ONE, LOCAL_ONE, TWO, THREE, ANY) is Eventual, served by any replica as
// it stands; a quorum's or every replica's (QUORUM, LOCAL_QUORUM, EACH_QUORUM, ALL) and
// SERIAL and LOCAL_SERIAL are Strong, linearizable and charged twice as a read.
func readLevel(c primitive.ConsistencyLevel) engine.Level {
	switch c {
	case primitive.ConsistencyLevelAny, primitive.ConsistencyLevelOne, primitive.ConsistencyLevelLocalOne,
		primitive.ConsistencyLevelTwo, primitive.ConsistencyLevelThree:
		return engine.Eventual
	}
	return engine.Strong
}
