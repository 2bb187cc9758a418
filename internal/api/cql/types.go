package cql

import (
	"errors"
	"fmt"

	"github.com/datastax/go-cassandra-native-protocol/datatype"

	"github.com/partita-db/partita/internal/cqlvalue"
)

// durationClass is how protocol v4 names duration, which has a type code only from v5 on.
const durationClass = "org.apache.cassandra.db.marshal.DurationType"

// dataType is t as protocol v4 describes a column's type.
//
// TODO(issue 16): use (*cqlvalue.Type).DataType() once cqlvalue has it, keeping the v4
// exception for duration here.
func dataType(t *cqlvalue.Type) (datatype.DataType, error) {
	if t == nil {
		return nil, errors.New("a column has no type")
	}
	if dt, ok := nativeTypes[t.Kind]; ok {
		return dt, nil
	}
	elems := make([]datatype.DataType, len(t.Elems))
	for i, e := range t.Elems {
		dt, err := dataType(e)
		if err != nil {
			return nil, err
		}
		elems[i] = dt
	}
	switch {
	case (t.Kind == cqlvalue.List || t.Kind == cqlvalue.Set) && len(elems) == 1:
		if t.Kind == cqlvalue.List {
			return datatype.NewList(elems[0]), nil
		}
		return datatype.NewSet(elems[0]), nil
	case t.Kind == cqlvalue.Map && len(elems) == 2:
		return datatype.NewMap(elems[0], elems[1]), nil
	case t.Kind == cqlvalue.Tuple:
		return datatype.NewTuple(elems...), nil
	case t.Kind == cqlvalue.UDT:
		return datatype.NewUserDefined(t.Keyspace, t.Name, t.Fields, elems)
	}
	return nil, fmt.Errorf("no protocol type for kind %d with %d element types", t.Kind, len(t.Elems))
}

var nativeTypes = map[cqlvalue.Kind]datatype.DataType{
	cqlvalue.Ascii: datatype.Ascii, cqlvalue.Bigint: datatype.Bigint, cqlvalue.Blob: datatype.Blob,
	cqlvalue.Boolean: datatype.Boolean, cqlvalue.Counter: datatype.Counter, cqlvalue.Date: datatype.Date,
	cqlvalue.Decimal: datatype.Decimal, cqlvalue.Double: datatype.Double,
	cqlvalue.Duration: datatype.NewCustom(durationClass), cqlvalue.Float: datatype.Float,
	cqlvalue.Inet: datatype.Inet, cqlvalue.Int: datatype.Int, cqlvalue.Smallint: datatype.Smallint,
	cqlvalue.Text: datatype.Varchar, cqlvalue.Time: datatype.Time, cqlvalue.Timestamp: datatype.Timestamp,
	cqlvalue.Timeuuid: datatype.Timeuuid, cqlvalue.Tinyint: datatype.Tinyint, cqlvalue.UUID: datatype.Uuid,
	cqlvalue.Varint: datatype.Varint,
}
