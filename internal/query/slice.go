package query

// sliceMax is the end of the one range a Slice holds.
const sliceMax = "\xff"

// Slice is a Reader over documents held in memory, such as the catalog's databases,
// containers and offers. A document's sequence is its index plus one.
type Slice [][]byte

func (s Slice) Scan(from *Resume, fn func(Position, []byte) (bool, error)) error {
	first, ok := from.Start("", sliceMax)
	if !ok {
		return nil
	}
	for seq := max(1, min(first, uint64(len(s)+1))); seq <= uint64(len(s)); seq++ {
		more, err := fn(Position{Max: sliceMax, Seq: seq}, s[seq-1])
		if err != nil || !more {
			return err
		}
	}
	return nil
}
