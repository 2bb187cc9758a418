package cql

import (
	"fmt"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/partita-db/partita/internal/cqlexec"
)

// result is the RESULT message for what a statement returned; skipMetadata leaves the rows'
// column metadata out (EXECUTE's flag: the driver has it from PREPARE).
func (c *conn) result(res *cqlexec.Result, skipMetadata bool) message.Message {
	switch res.Kind {
	case cqlexec.ResultVoid:
		return &message.VoidResult{}
	case cqlexec.ResultSetKeyspace:
		c.use(res.Keyspace)
		return &message.SetKeyspaceResult{Keyspace: res.Keyspace}
	case cqlexec.ResultSchemaChange:
		ch := res.Change
		return &message.SchemaChangeResult{
			ChangeType: primitive.SchemaChangeType(ch.Change), Target: primitive.SchemaChangeTarget(ch.Target),
			Keyspace: ch.Keyspace, Object: ch.Name,
		}
	case cqlexec.ResultRows:
		rows := make(message.RowSet, len(res.Rows))
		for i, row := range res.Rows {
			if len(row) != len(res.Columns) {
				return &message.ServerError{ErrorMessage: fmt.Sprintf("row %d has %d values for %d columns", i, len(row), len(res.Columns))}
			}
			rows[i] = row
		}
		md := &message.RowsMetadata{ColumnCount: int32(len(res.Columns)), PagingState: res.PagingState}
		if !skipMetadata {
			cols, err := columns(res.Columns)
			if err != nil {
				return &message.ServerError{ErrorMessage: err.Error()}
			}
			md.Columns = cols
		}
		return &message.RowsResult{Metadata: md, Data: rows}
	}
	return &message.ServerError{ErrorMessage: fmt.Sprintf("unknown result kind %d", res.Kind)}
}

// columns describes bind markers or result columns; the codec writes one table spec for all of
// them when they share it.
func columns(cs []cqlexec.Column) ([]*message.ColumnMetadata, error) {
	if len(cs) == 0 {
		return nil, nil
	}
	out := make([]*message.ColumnMetadata, len(cs))
	for i, col := range cs {
		if col.Type == nil {
			return nil, fmt.Errorf("column %s has no type", col.Name)
		}
		out[i] = &message.ColumnMetadata{Keyspace: col.Keyspace, Table: col.Table, Name: col.Name, Type: col.Type.DataType()}
	}
	return out, nil
}
