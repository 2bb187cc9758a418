package cqlexec

import (
	"encoding/hex"

	"github.com/partita-db/partita/internal/cql"
	"github.com/partita-db/partita/internal/cqlvalue"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/value"
)

// Where a row lives (docs/design/cql-placement.md). Its partition key is serialized as
// Cassandra hashes it (pkBytes), its token placed at epk.TokenEPK, and its id is the hex form
// of an order-preserving encoding of the partition key bytes and then each clustering value
// (cqlvalue.AppendKey, inverted for DESC columns). Hex keeps the order of the bytes and makes
// a valid JSON string; the item order (EPK, id) is then the table's order: token, partition
// key, clustering. A partition's static row has the partition key part alone, so it sorts
// before the partition's rows, and every id of a partition starts with it.

// maxKeyComponent is Cassandra's limit on one component of a key: 64 KiB - 1.
const maxKeyComponent = 1<<16 - 1

// pkBytes is the partition key's serialization for the token: the value itself for one
// column, epk.CompositeKey for several.
func pkBytes(vals [][]byte) ([]byte, error) {
	if len(vals) == 1 {
		if len(vals[0]) > maxKeyComponent {
			return nil, keyTooLong()
		}
		return vals[0], nil
	}
	k, ok := epk.CompositeKey(vals)
	if !ok {
		return nil, keyTooLong()
	}
	return k, nil
}

func keyTooLong() error {
	return cql.Invalid(fault.Pos{}, "Key length of %d is longer than maximum of %d", maxKeyComponent+1, maxKeyComponent)
}

// place is a partition's position: its token's EPK and the id prefix of its rows.
type place struct {
	token  int64
	epk    epk.EPK
	prefix []byte // the order-preserving encoding of the partition key bytes
}

// placeOf places the partition whose serialized key is pk.
func placeOf(pk []byte) place {
	t := epk.Token(pk)
	return place{token: t, epk: epk.TokenEPK(t), prefix: value.AppendEscaped(nil, string(pk))}
}

// rowID is the id of the row with clustering values ck (none: the static row).
func (t *table) rowID(p place, ck [][]byte) string {
	return hex.EncodeToString(t.appendClustering(append([]byte(nil), p.prefix...), ck))
}

// appendClustering appends the encoding of a clustering prefix.
func (t *table) appendClustering(dst []byte, ck [][]byte) []byte {
	for i, v := range ck {
		c := t.ck[i]
		dst = cqlvalue.AppendKey(dst, c.typ, v, c.desc)
	}
	return dst
}

// idAfterAll is the least id greater than every id that starts with prefix (hex): hex digits
// all sort below 'g'.
func idAfterAll(prefix string) string { return prefix + "g" }

// idAfter is the least id greater than id.
func idAfter(id string) string { return id + "\x00" }
