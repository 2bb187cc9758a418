package nodemsg

import (
	"errors"

	"google.golang.org/protobuf/proto"
)

// Marker is the first byte of a typed message on the cluster transport.
const Marker byte = 0x01

// ErrNotTyped is DecodeRequest's and DecodeAnswer's error for bytes that do not begin with
// Marker: a JSON message of the previous protocol, or garbage.
var ErrNotTyped = errors.New("nodemsg: not a typed message")

// Typed reports whether b is framed as a typed message.
func Typed(b []byte) bool { return len(b) > 0 && b[0] == Marker }

// Encode frames m, a Request or an Answer, for the cluster transport.
func Encode(m proto.Message) ([]byte, error) {
	return proto.MarshalOptions{}.MarshalAppend([]byte{Marker}, m)
}

// DecodeRequest reads a request framed by Encode.
func DecodeRequest(b []byte) (*Request, error) {
	var r Request
	return &r, decode(b, &r)
}

// DecodeAnswer reads an answer framed by Encode.
func DecodeAnswer(b []byte) (*Answer, error) {
	var a Answer
	return &a, decode(b, &a)
}

func decode(b []byte, m proto.Message) error {
	if !Typed(b) {
		return ErrNotTyped
	}
	return proto.UnmarshalOptions{}.Unmarshal(b[1:], m)
}
