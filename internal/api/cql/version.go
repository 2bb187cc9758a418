package cql

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// unsupportedVersion is the message Cassandra answers a version it does not speak with, in its
// words, since drivers parse them: gocql reads "the greatest is N" and retries with N; the Node
// driver steps down from its DSE versions (0x42, 0x41) to 4 on "Invalid or unsupported protocol
// version". Partita speaks v4 only, so both bounds are 4 (Cassandra 3 says 3 and 4): a driver
// told 3 might try v3 next and only fail again.
func unsupportedVersion(v byte) string {
	return fmt.Sprintf("Invalid or unsupported protocol version (%d); the lowest supported version is 4 and the greatest is 4", v)
}

// writeVersionError answers a frame of version v on stream with a PROTOCOL_ERROR laid out as
// that version's header is (the codec cannot encode every version a client may send), with the
// client's version in it: drivers (gocql v2 among them) drop a response of a version other
// than the one they sent.
func writeVersionError(w io.Writer, v byte, stream int16) error {
	msg := unsupportedVersion(v)
	body := make([]byte, 0, 6+len(msg))
	body = binary.BigEndian.AppendUint32(body, uint32(primitive.ErrorCodeProtocolError))
	body = binary.BigEndian.AppendUint16(body, uint16(len(msg)))
	body = append(body, msg...)

	h := []byte{0x80 | v, 0}
	if v < 3 {
		h = append(h, byte(stream))
	} else {
		h = binary.BigEndian.AppendUint16(h, uint16(stream))
	}
	h = append(h, byte(primitive.OpCodeError))
	h = binary.BigEndian.AppendUint32(h, uint32(len(body)))
	_, err := w.Write(append(h, body...))
	return err
}
