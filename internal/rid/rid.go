// Package rid makes Cosmos resource ids (_rid): a database's is 4 bytes, a container's is its
// database's followed by 4 of its own, an item's is its container's followed by 8 of its own.
// On the wire they are base64 with '-' in place of '/'. The JavaScript SDK relies on these
// lengths (it tracks session tokens only when a container rid decodes to 8 bytes).
//
// It owns only the format; who picks the numbers is the engine's business.
package rid

import (
	"encoding/base64"
	"encoding/binary"
)

var encoding = base64.NewEncoding("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+-")

// Database is a database's rid.
type Database [4]byte

// Container is a container's rid: its database's and its own number.
type Container [8]byte

// ForDatabase makes the rid of database number n.
func ForDatabase(n uint32) Database {
	var d Database
	binary.BigEndian.PutUint32(d[:], n)
	return d
}

// ForContainer makes the rid of container number n in database db. The high bit of the
// container half is set, as Cosmos does, so the half is never all zeros.
func ForContainer(db Database, n uint32) Container {
	var c Container
	copy(c[:4], db[:])
	binary.BigEndian.PutUint32(c[4:], n|1<<31)
	return c
}

// Item makes an item's rid from its container's and its own 8 bytes.
func Item(c Container, own [8]byte) string {
	var b [16]byte
	copy(b[:8], c[:])
	copy(b[8:], own[:])
	return encoding.EncodeToString(b[:])
}

func (d Database) String() string  { return encoding.EncodeToString(d[:]) }
func (c Container) String() string { return encoding.EncodeToString(c[:]) }

// Decode parses a rid of any kind; ok is false when s is not valid base64 of 4, 8 or 16 bytes.
func Decode(s string) (b []byte, ok bool) {
	b, err := encoding.DecodeString(s)
	if err != nil || (len(b) != 4 && len(b) != 8 && len(b) != 16) {
		return nil, false
	}
	return b, true
}
