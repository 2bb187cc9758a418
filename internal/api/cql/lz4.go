package cql

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/pierrec/lz4/v4"
)

// lz4Body compresses frame bodies as protocol v4 says: the uncompressed length as a 4-byte
// big-endian integer, then one raw LZ4 block. (The codec's own compressor guesses the
// uncompressed size up to 8 times the compressed one and cannot write incompressible bodies;
// this one trusts the declared length, bounded by the frame size limit.)
type lz4Body struct {
	max int // the largest uncompressed body accepted
}

func (c lz4Body) CompressWithLength(src io.Reader, dst io.Writer) error {
	data, err := readAll(src)
	if err != nil {
		return err
	}
	out := make([]byte, 4+lz4.CompressBlockBound(len(data)))
	binary.BigEndian.PutUint32(out, uint32(len(data)))
	n, err := lz4.CompressBlock(data, out[4:], nil)
	if err != nil {
		return fmt.Errorf("lz4: %w", err)
	}
	if n == 0 { // incompressible (or empty): one sequence of literals is a valid block
		n = literalBlock(data, out[4:])
	}
	_, err = dst.Write(out[:4+n])
	return err
}

func (c lz4Body) DecompressWithLength(src io.Reader, dst io.Writer) error {
	var size [4]byte
	if _, err := io.ReadFull(src, size[:]); err != nil {
		return errors.New("lz4: body shorter than its length prefix")
	}
	n := binary.BigEndian.Uint32(size[:])
	if uint64(n) > uint64(c.max) {
		return fmt.Errorf("lz4: uncompressed body of %d bytes is over the limit of %d", n, c.max)
	}
	data, err := readAll(src)
	if err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	out := make([]byte, n)
	m, err := lz4.UncompressBlock(data, out)
	if err != nil {
		return fmt.Errorf("lz4: %w", err)
	}
	if m != int(n) {
		return fmt.Errorf("lz4: body uncompressed to %d bytes, its prefix says %d", m, n)
	}
	_, err = dst.Write(out)
	return err
}

// literalBlock writes data to dst as an LZ4 block of literals only; dst has room for
// CompressBlockBound(len(data)) bytes.
func literalBlock(data, dst []byte) int {
	l, i := len(data), 0
	if l < 15 {
		dst[0] = byte(l << 4)
		i = 1
	} else {
		dst[0] = 0xF0
		i = 1
		for r := l - 15; ; r -= 255 {
			if r < 255 {
				dst[i] = byte(r)
				i++
				break
			}
			dst[i] = 255
			i++
		}
	}
	return i + copy(dst[i:], data)
}

func readAll(r io.Reader) ([]byte, error) {
	if b, ok := r.(*bytes.Buffer); ok {
		return b.Bytes(), nil
	}
	return io.ReadAll(r)
}
