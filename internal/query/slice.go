package query

import "encoding/binary"

// Slice is a Reader over documents held in memory, such as the catalog's databases,
// containers and offers. Positions are the documents' indexes.
type Slice [][]byte

func (s Slice) Scan(from *Position, inclusive bool, fn func(Position, []byte) (bool, error)) error {
	start := 0
	if from != nil && len(from.EPK) == 8 {
		start = int(binary.BigEndian.Uint64([]byte(from.EPK)))
		if !inclusive {
			start++
		}
	}
	for i := start; i < len(s); i++ {
		more, err := fn(Position{EPK: string(binary.BigEndian.AppendUint64(nil, uint64(i)))}, s[i])
		if err != nil || !more {
			return err
		}
	}
	return nil
}
