package cqlvalue

import "github.com/datastax/go-cassandra-native-protocol/datatype"

// nativeDataTypes are the protocol's option ids for the native kinds. text is sent as varchar
// (0x000D), as Cassandra does: the protocol has no separate text id in v4. Nor has v4 one for
// duration (v5 has): it is a custom type named by its Cassandra class, as Cassandra sends it.
var nativeDataTypes = [List]datatype.DataType{
	Ascii: datatype.Ascii, Bigint: datatype.Bigint, Blob: datatype.Blob, Boolean: datatype.Boolean,
	Counter: datatype.Counter, Date: datatype.Date, Decimal: datatype.Decimal, Double: datatype.Double,
	Duration: datatype.NewCustom("org.apache.cassandra.db.marshal.DurationType"), Float: datatype.Float, Inet: datatype.Inet, Int: datatype.Int,
	Smallint: datatype.Smallint, Text: datatype.Varchar, Time: datatype.Time,
	Timestamp: datatype.Timestamp, Timeuuid: datatype.Timeuuid, Tinyint: datatype.Tinyint,
	UUID: datatype.Uuid, Varint: datatype.Varint,
}

// DataType is t as the native protocol describes it in result and bind metadata.
func (t *Type) DataType() datatype.DataType {
	if t.Kind.IsNative() {
		return nativeDataTypes[t.Kind]
	}
	elems := make([]datatype.DataType, len(t.Elems))
	for i, e := range t.Elems {
		elems[i] = e.DataType()
	}
	switch t.Kind {
	case List:
		return datatype.NewList(elems[0])
	case Set:
		return datatype.NewSet(elems[0])
	case Map:
		return datatype.NewMap(elems[0], elems[1])
	case Tuple:
		return datatype.NewTuple(elems...)
	case UDT:
		// NewUserDefined fails only when names and types differ in number, which a UDT Type
		// never does (Fields parallel Elems).
		u, err := datatype.NewUserDefined(t.Keyspace, t.Name, t.Fields, elems)
		if err != nil {
			panic("cqlvalue: malformed UDT type " + t.Name + ": " + err.Error())
		}
		return u
	}
	panic("cqlvalue: DataType of an invalid type")
}
