package raftrpc

import (
	"encoding/binary"
	"errors"
	"fmt"

	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/partita-db/partita/internal/replication"
	"github.com/partita-db/partita/internal/storage"
)

// An envelope on the wire, version 1 (integers are unsigned varints, byte strings a varint
// length and the bytes):
//
//	version 1 | group | from: replica node store | to: replica node store
//	flags (1 quiesce, 2 message, 4 snapshot) | term | commit
//	[message: raftpb.Message's protobuf bytes]
//	[snapshot: meta | span count | per span: start end sstable]
//
// The version is the first byte so that a node of a later release can tell an older peer's
// envelopes apart; a version it does not know is refused, never guessed at.
const envelopeVersion = 1

const (
	flagQuiesce  = 1 << 0
	flagMessage  = 1 << 1
	flagSnapshot = 1 << 2
	knownFlags   = flagQuiesce | flagMessage | flagSnapshot
)

// ErrMalformed is what decodeEnvelope returns for bytes that are not an envelope.
var ErrMalformed = errors.New("raftrpc: malformed envelope")

// maxSpans bounds the spans a snapshot may name: a partition has a handful.
const maxSpans = 64

// appendEnvelope appends env's encoding to dst.
func appendEnvelope(dst []byte, env *replication.Envelope) ([]byte, error) {
	dst = append(dst, envelopeVersion)
	dst = binary.AppendUvarint(dst, uint64(env.Group))
	dst = appendMember(dst, env.From)
	dst = appendMember(dst, env.To)
	var flags byte
	if env.Quiesce {
		flags |= flagQuiesce
	}
	if env.Msg != nil {
		flags |= flagMessage
	}
	if env.Snapshot != nil {
		flags |= flagSnapshot
	}
	dst = append(dst, flags)
	dst = binary.AppendUvarint(dst, env.Term)
	dst = binary.AppendUvarint(dst, env.Commit)
	if env.Msg != nil {
		m, err := proto.Marshal(env.Msg)
		if err != nil {
			return nil, err
		}
		dst = appendBytes(dst, m)
	}
	if s := env.Snapshot; s != nil {
		if len(s.SSTs) != len(s.Spans) || len(s.Spans) > maxSpans {
			return nil, fmt.Errorf("raftrpc: a snapshot of %d spans and %d sstables", len(s.Spans), len(s.SSTs))
		}
		dst = appendBytes(dst, s.Meta)
		dst = binary.AppendUvarint(dst, uint64(len(s.Spans)))
		for i, sp := range s.Spans {
			dst = appendBytes(dst, sp.Start)
			dst = appendBytes(dst, sp.End)
			dst = appendBytes(dst, s.SSTs[i])
		}
	}
	return dst, nil
}

func appendMember(dst []byte, m replication.Member) []byte {
	dst = binary.AppendUvarint(dst, uint64(m.Replica))
	dst = binary.AppendUvarint(dst, uint64(m.Node))
	return binary.AppendUvarint(dst, uint64(m.Store))
}

func appendBytes(dst, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// decodeEnvelope decodes an envelope; its byte strings are copies, not parts of b.
func decodeEnvelope(b []byte) (*replication.Envelope, error) {
	d := decoder{b: b}
	if v := d.byte(); v != envelopeVersion {
		if d.err != nil {
			return nil, d.err
		}
		return nil, fmt.Errorf("%w: version %d", ErrMalformed, v)
	}
	env := &replication.Envelope{Group: replication.GroupID(d.uvarint())}
	env.From, env.To = d.member(), d.member()
	flags := d.byte()
	if flags&^knownFlags != 0 {
		return nil, fmt.Errorf("%w: flags %#x", ErrMalformed, flags)
	}
	env.Quiesce = flags&flagQuiesce != 0
	env.Term, env.Commit = d.uvarint(), d.uvarint()
	if flags&flagMessage != 0 {
		m := d.bytes()
		if d.err == nil {
			env.Msg = new(pb.Message)
			if err := proto.Unmarshal(m, env.Msg); err != nil {
				return nil, fmt.Errorf("%w: raft message: %v", ErrMalformed, err)
			}
		}
	}
	if flags&flagSnapshot != 0 {
		s := &replication.SnapshotData{Meta: d.bytes()}
		n := d.uvarint()
		if n > maxSpans {
			return nil, fmt.Errorf("%w: %d spans", ErrMalformed, n)
		}
		for range n {
			s.Spans = append(s.Spans, storage.Span{Start: d.bytes(), End: d.bytes()})
			s.SSTs = append(s.SSTs, d.bytes())
		}
		env.Snapshot = s
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("%w: %d bytes after it", ErrMalformed, len(d.b))
	}
	if d.err != nil {
		return nil, d.err
	}
	return env, nil
}

// decoder reads an envelope's fields; the first error sticks and zeroes what follows.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", ErrMalformed, what)
	}
	d.b = nil
}

func (d *decoder) byte() byte {
	if len(d.b) == 0 {
		d.fail("cut short")
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("a bad number")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail("a string longer than what is left")
		return nil
	}
	v := append([]byte(nil), d.b[:n]...)
	d.b = d.b[n:]
	return v
}

func (d *decoder) member() replication.Member {
	return replication.Member{Replica: replication.ReplicaID(d.uvarint()), Node: replication.NodeID(d.uvarint()),
		Store: replication.StoreID(d.uvarint())}
}
