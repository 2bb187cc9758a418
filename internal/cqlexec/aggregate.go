package cqlexec

import (
	"encoding/binary"
	"math"

	"github.com/partita-db/partita/internal/cqlvalue"
)

// aggregator folds the rows of a SELECT of aggregates into its one row. Plain columns beside
// aggregates show the first row's values, as in Cassandra.
type aggregator struct {
	items []selItem
	first [][]byte
	rows  int64
	count []int64   // non-null values seen, per item
	best  [][]byte  // min or max so far
	isum  []int64   // integer sums
	fsum  []float64 // float sums
}

func newAggregator(items []selItem) *aggregator {
	n := len(items)
	return &aggregator{items: items, count: make([]int64, n), best: make([][]byte, n), isum: make([]int64, n), fsum: make([]float64, n)}
}

func (a *aggregator) add(row [][]byte) {
	if a.rows == 0 {
		a.first = row
	}
	a.rows++
	for i, it := range a.items {
		v := row[i]
		if v == nil || it.kind < selCountCol || it.kind > selAvg {
			continue
		}
		a.count[i]++
		switch it.kind {
		case selMin, selMax:
			if a.best[i] == nil {
				a.best[i] = v
				continue
			}
			n := cqlvalue.Compare(it.typ, v, a.best[i])
			if it.kind == selMin && n < 0 || it.kind == selMax && n > 0 {
				a.best[i] = v
			}
		case selSum, selAvg:
			if f, ok := floatOf(it.typ, v); ok {
				a.fsum[i] += f
			} else if n, err := cqlvalue.Int64(it.typ, v); err == nil {
				a.isum[i] += n
			}
		}
	}
}

// row is the aggregate row.
func (a *aggregator) row() [][]byte {
	out := make([][]byte, len(a.items))
	for i, it := range a.items {
		switch it.kind {
		case selCount:
			out[i] = cqlvalue.EncodeBigint(a.rows)
		case selCountCol:
			out[i] = cqlvalue.EncodeBigint(a.count[i])
		case selMin, selMax:
			out[i] = a.best[i]
		case selSum, selAvg:
			out[i] = numberOf(it.typ, a.isum[i], a.fsum[i], a.count[i], it.kind == selAvg)
		default:
			if a.first != nil {
				out[i] = a.first[i]
			}
		}
	}
	return out
}

// floatOf reads a float or double.
func floatOf(t *cqlvalue.Type, v []byte) (float64, bool) {
	switch {
	case t.Kind == cqlvalue.Double && len(v) == 8:
		return math.Float64frombits(binary.BigEndian.Uint64(v)), true
	case t.Kind == cqlvalue.Float && len(v) == 4:
		return float64(math.Float32frombits(binary.BigEndian.Uint32(v))), true
	}
	return 0, false
}

// numberOf encodes a sum or an average in the column's type (integer averages truncate, as
// Cassandra's do).
func numberOf(t *cqlvalue.Type, isum int64, fsum float64, n int64, avg bool) []byte {
	if avg && n > 0 {
		isum /= n
		fsum /= float64(n)
	}
	switch t.Kind {
	case cqlvalue.Double:
		return binary.BigEndian.AppendUint64(nil, math.Float64bits(fsum))
	case cqlvalue.Float:
		return binary.BigEndian.AppendUint32(nil, math.Float32bits(float32(fsum)))
	case cqlvalue.Int:
		return cqlvalue.EncodeInt(int32(isum))
	case cqlvalue.Smallint:
		return binary.BigEndian.AppendUint16(nil, uint16(isum))
	case cqlvalue.Tinyint:
		return []byte{byte(isum)}
	}
	return cqlvalue.EncodeBigint(isum)
}
