// Package rid makes Cosmos resource ids (_rid): a database's is 4 bytes, a container's is its
// database's followed by 4 of its own, an item's or a script's is its container's followed by
// 8 of its own. A user's is like a container's (its database's and 4 of its own, with the high
// bit clear), and a permission's is its user's followed by 8 of its own.
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

// ChildKind tags the rid of a container's child other than an item (a script) with Cosmos's
// code for its kind (CollectionChildResourceType), in the high four bits of the last byte.
type ChildKind byte

// The tags Cosmos gives stored procedures, triggers and user-defined functions.
const (
	UserDefinedFunction ChildKind = 6
	Trigger             ChildKind = 7
	StoredProcedure     ChildKind = 8
)

// Child makes the rid of child number n (below 2^48) of kind k in container c: its own 8
// bytes are a marker byte with the high bit set, n in the next six bytes and the kind's tag
// in the last. An item's own bytes are its creation sequence, big-endian, whose first byte
// would need 2^63 items to reach the marker, so the two never meet; and children of different
// kinds differ in their tag.
func Child(c Container, k ChildKind, n uint64) string {
	var own [8]byte
	binary.BigEndian.PutUint64(own[:], 1<<63|(n&(1<<48-1))<<8|uint64(k)<<4)
	return Item(c, own)
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

// User is a user's rid: its database's and its own number. Cosmos tells a user from a
// container by the high bit of the second half, which a user's never has.
type User [8]byte

// ForUser makes the rid of user number n (below 2^31) in database db.
func ForUser(db Database, n uint32) User {
	var u User
	copy(u[:4], db[:])
	binary.BigEndian.PutUint32(u[4:], n&^(1<<31))
	return u
}

func (u User) String() string { return encoding.EncodeToString(u[:]) }

// Permission is a permission's rid: its user's followed by its own number.
type Permission [16]byte

// ForPermission makes the rid of permission number n of user u.
func ForPermission(u User, n uint64) Permission {
	var p Permission
	copy(p[:8], u[:])
	binary.BigEndian.PutUint64(p[8:], n)
	return p
}

func (p Permission) String() string { return encoding.EncodeToString(p[:]) }

// Parts splits a permission's rid into its database's number, its user's and its own.
func (p Permission) Parts() (db, user uint32, n uint64) {
	return binary.BigEndian.Uint32(p[:4]), binary.BigEndian.Uint32(p[4:8]), binary.BigEndian.Uint64(p[8:])
}
