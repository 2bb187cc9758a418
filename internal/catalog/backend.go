package catalog

import (
	"errors"
	"fmt"
)

// Kind is a kind of record; its byte is part of the record's key in both backends.
type Kind byte

// The kinds of record.
const (
	Databases  Kind = 'D'
	Containers Kind = 'C'
	Users      Kind = 'U'
)

func (k Kind) valid() bool { return k == Databases || k == Containers || k == Users }

// Key names a record: its kind and its number, which is never reused within a kind.
type Key struct {
	Kind Kind
	Num  uint32
}

func (k Key) String() string { return fmt.Sprintf("%c/%d", k.Kind, k.Num) }

// Record is a record's key and its value, the engine's JSON.
type Record struct {
	Key
	Value []byte
}

// Change is what one catalog operation writes. It is applied whole, durably, or not at all.
type Change struct {
	// After is the revision of the catalog the change was decided against (Contents.Revision,
	// or what the last Commit or Watch event returned). A shared backend refuses the change
	// with ErrStale when the catalog has changed since; Local, whose only writer is its
	// engine, does not look at it.
	After int64
	// Counters is the catalog's counters after the change. Every change writes them (the
	// catalog's version is among them), which is also how a shared backend knows whether it
	// changed since After.
	Counters []byte
	Put      []Record
	Delete   []Key
}

func (ch Change) check() error {
	if ch.Counters == nil {
		return errors.New("catalog: a change without counters")
	}
	for _, r := range ch.Put {
		if !r.Kind.valid() || r.Value == nil {
			return fmt.Errorf("catalog: a record %s that cannot be written", r.Key)
		}
	}
	for _, k := range ch.Delete {
		if !k.Kind.valid() {
			return fmt.Errorf("catalog: a record %s that cannot be deleted", k)
		}
	}
	return nil
}

// Contents is the whole catalog as of one revision.
type Contents struct {
	Counters []byte   // nil for a catalog never written
	Records  []Record // by kind (databases, containers, users), then number
	// Revision is the catalog's revision: a later change has a larger one. Local's is
	// always 0.
	Revision int64
}

// Backend keeps a catalog.
type Backend interface {
	// Load reads the whole catalog.
	Load() (Contents, error)
	// Commit applies ch and returns the catalog's revision after it.
	Commit(ch Change) (rev int64, err error)
}

// ErrStale refuses a change decided against an older catalog than the backend's: nothing was
// written. Catch up with the backend and decide the change again.
var ErrStale = errors.New("catalog: the catalog changed since the change was decided")

// kindOrder is the order of Contents.Records: databases before the containers in them, and
// users last.
var kindOrder = [...]Kind{Databases, Containers, Users}
