package cql

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/datastax/go-cassandra-native-protocol/frame"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// The version spoken: v4, which every driver speaks (version.go answers the others).
const version = primitive.ProtocolVersion4

// A request frame that cannot be served is one of these; the connection answers it, then
// closes, since what follows it on the stream cannot be trusted.
type (
	// badVersion is a frame of a version other than 4, answered in the client's version.
	badVersion struct {
		version byte
		stream  int16
	}
	// badFrame is a malformed v4 frame, answered with a PROTOCOL_ERROR.
	badFrame struct {
		stream int16
		msg    string
	}
)

func (e *badVersion) Error() string { return unsupportedVersion(e.version) }
func (e *badFrame) Error() string   { return e.msg }

// frameReader reads request frames off a connection.
type frameReader struct {
	r   io.Reader
	max int // the largest body accepted, compressed or not
	// codec decodes bodies; it is swapped for one with LZ4 once STARTUP asks for it (without,
	// a compressed body is refused as malformed).
	codec frame.RawCodec
}

// read reads one frame. An io error means the connection is gone; *badVersion and *badFrame
// must be answered.
func (fr *frameReader) read() (*frame.Frame, error) {
	h, err := fr.readHeader()
	if err != nil {
		return nil, err
	}
	// Read the body as it arrives rather than allocating what the header claims.
	var body bytes.Buffer
	if _, err := io.CopyN(&body, fr.r, int64(h.BodyLength)); err != nil {
		return nil, err
	}
	b, err := decodeBody(fr.codec, h, &body)
	if err != nil {
		return nil, &badFrame{h.StreamId, "Invalid or malformed message: " + err.Error()}
	}
	return &frame.Frame{Header: h, Body: b}, nil
}

// readHeader reads and checks a frame's header. For a version other than 4 it reads the
// header as that version lays it out, then discards the body, so that the answer is not lost
// to a reset of a connection closed with unread bytes.
func (fr *frameReader) readHeader() (*frame.Header, error) {
	var b [9]byte
	if _, err := io.ReadFull(fr.r, b[:1]); err != nil {
		return nil, err
	}
	v := b[0] & 0x7F
	size := 9
	if v < 3 { // v1 and v2 have a one-byte stream id
		size = 8
	}
	if _, err := io.ReadFull(fr.r, b[1:size]); err != nil {
		return nil, err
	}
	var stream int16
	var rest []byte
	if size == 8 {
		stream, rest = int16(int8(b[2])), b[3:8]
	} else {
		stream, rest = int16(binary.BigEndian.Uint16(b[2:4])), b[4:9]
	}
	op, length := primitive.OpCode(rest[0]), int32(binary.BigEndian.Uint32(rest[1:5]))
	if primitive.ProtocolVersion(v) != version {
		if length > 0 && int(length) <= fr.max {
			if _, err := io.CopyN(io.Discard, fr.r, int64(length)); err != nil {
				return nil, err
			}
		}
		return nil, &badVersion{version: v, stream: stream}
	}
	switch {
	case b[0]&0x80 != 0:
		return nil, &badFrame{stream, "Wrong protocol direction (expected REQUEST, got RESPONSE)"}
	case length < 0 || int(length) > fr.max:
		return nil, &badFrame{stream, fmt.Sprintf("Request is too big: length %d exceeds maximum allowed length %d.", length, fr.max)}
	case !op.IsRequest():
		return nil, &badFrame{stream, fmt.Sprintf("Unknown or unexpected opcode 0x%02x in a request", byte(op))}
	}
	return &frame.Header{
		Version: version, Flags: primitive.HeaderFlag(b[1]), StreamId: stream, OpCode: op, BodyLength: length,
	}, nil
}

// decodeBody decodes a body with codec, turning a panic of the codec on hostile input into an
// error.
func decodeBody(codec frame.RawCodec, h *frame.Header, body io.Reader) (b *frame.Body, err error) {
	defer func() {
		if r := recover(); r != nil {
			b, err = nil, fmt.Errorf("undecodable body: %v", r)
		}
	}()
	return codec.DecodeBody(h, body)
}
