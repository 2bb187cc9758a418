package replication

import (
	"encoding/binary"
	"errors"
	"fmt"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/partita-db/partita/internal/storage"
)

// logStore is one group's Raft log, hard state and truncated state on this node, kept in the
// node's Pebble (storage.RaftKey), as the raft.Storage its RawNode reads. Only the host's
// goroutine uses it. It keeps the newest entries in memory too, since they are what a leader
// reads back to send to its followers.
type logStore struct {
	db    *storage.DB
	group uint64
	hard  *pb.HardState
	// conf is the configuration as of the state machine's applied index, what a restarted
	// replica starts from (Raft learns later changes from the entries it replays).
	conf *pb.ConfState
	// The log holds the entries [first, last]; the one before first was truncated and only its
	// term is kept (it is the entry a snapshot ends with, for a replica started by one).
	first, last uint64
	prevTerm    uint64
	// cache holds the entries [last-len(cache)+1, last].
	cache      []*pb.Entry
	cacheBytes int
	// snapshot makes the snapshot Raft asks for (the host's).
	snapshot func() (*pb.Snapshot, error)
}

var _ raft.Storage = (*logStore)(nil)

// Bounds of the cache of recent entries.
const (
	cacheEntries = 4096
	cacheBytes   = 16 << 20
)

// loadLogStore reads a group's Raft state from storage.
func loadLogStore(db *storage.DB, group uint64) (*logStore, error) {
	s := &logStore{db: db, group: group, hard: &pb.HardState{}, conf: &pb.ConfState{}}
	v, err := db.GetCopy(nil, storage.RaftKey(nil, group, storage.RaftHardState, 0))
	switch {
	case err == nil:
		if err := proto.Unmarshal(v, s.hard); err != nil {
			return nil, fmt.Errorf("group %d: hard state: %w", group, err)
		}
	case !storage.IsNotFound(err):
		return nil, err
	}
	var trunc, truncTerm uint64
	v, err = db.GetCopy(nil, storage.RaftKey(nil, group, storage.RaftTruncated, 0))
	switch {
	case err == nil:
		if len(v) != 16 {
			return nil, fmt.Errorf("group %d: bad truncated state", group)
		}
		trunc, truncTerm = binary.BigEndian.Uint64(v), binary.BigEndian.Uint64(v[8:])
	case !storage.IsNotFound(err):
		return nil, err
	}
	s.first, s.prevTerm, s.last = trunc+1, truncTerm, trunc
	span := storage.RaftLogSpan(group, 0, ^uint64(0))
	it, err := db.NewIter(span.Start, span.End)
	if err != nil {
		return nil, err
	}
	if it.Last() {
		_, _, idx, err := storage.ParseRaftKey(it.Key())
		if err != nil {
			it.Close()
			return nil, err
		}
		s.last = max(s.last, idx)
	}
	if err := it.Close(); err != nil {
		return nil, err
	}
	return s, nil
}

// truncatedValue encodes a truncated state: the index and term of the last entry removed.
func truncatedValue(index, term uint64) []byte {
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, index), term)
}

// InitialState implements raft.Storage.
func (s *logStore) InitialState() (*pb.HardState, *pb.ConfState, error) {
	return proto.Clone(s.hard).(*pb.HardState), proto.Clone(s.conf).(*pb.ConfState), nil
}

// FirstIndex implements raft.Storage.
func (s *logStore) FirstIndex() (uint64, error) { return s.first, nil }

// LastIndex implements raft.Storage.
func (s *logStore) LastIndex() (uint64, error) { return s.last, nil }

// cacheFirst is the index of the first cached entry.
func (s *logStore) cacheFirst() uint64 { return s.last + 1 - uint64(len(s.cache)) }

// Term implements raft.Storage.
func (s *logStore) Term(i uint64) (uint64, error) {
	switch {
	case i == s.first-1:
		return s.prevTerm, nil
	case i < s.first-1:
		return 0, raft.ErrCompacted
	case i > s.last:
		return 0, raft.ErrUnavailable
	case i >= s.cacheFirst():
		return s.cache[i-s.cacheFirst()].GetTerm(), nil
	}
	e, err := s.read(i)
	if err != nil {
		return 0, err
	}
	return e.GetTerm(), nil
}

func (s *logStore) read(i uint64) (*pb.Entry, error) {
	v, err := s.db.GetCopy(nil, storage.RaftKey(nil, s.group, storage.RaftEntry, i))
	if err != nil {
		return nil, fmt.Errorf("group %d: log entry %d: %w", s.group, i, err)
	}
	e := &pb.Entry{}
	return e, proto.Unmarshal(v, e)
}

// Entries implements raft.Storage: the entries [lo, hi), at most maxSize bytes of them but at
// least one.
func (s *logStore) Entries(lo, hi, maxSize uint64) ([]*pb.Entry, error) {
	switch {
	case lo < s.first:
		return nil, raft.ErrCompacted
	case hi > s.last+1:
		return nil, raft.ErrUnavailable
	}
	var out []*pb.Entry
	var size uint64
	add := func(e *pb.Entry) bool {
		size += uint64(proto.Size(e))
		if len(out) > 0 && size > maxSize {
			return false
		}
		out = append(out, e)
		return true
	}
	i := lo
	if i < s.cacheFirst() {
		span := storage.RaftLogSpan(s.group, lo, min(hi, s.cacheFirst()))
		it, err := s.db.NewIter(span.Start, span.End)
		if err != nil {
			return nil, err
		}
		for it.First(); it.Valid(); it.Next() {
			e := &pb.Entry{}
			if err := proto.Unmarshal(it.Value(), e); err != nil {
				it.Close()
				return nil, err
			}
			if e.GetIndex() != i {
				it.Close()
				return nil, fmt.Errorf("group %d: log entry %d missing", s.group, i)
			}
			i++
			if !add(e) {
				return out, it.Close()
			}
		}
		if err := it.Close(); err != nil {
			return nil, err
		}
		if i < min(hi, s.cacheFirst()) {
			return nil, fmt.Errorf("group %d: log entries from %d missing", s.group, i)
		}
	}
	for ; i < hi; i++ {
		if !add(s.cache[i-s.cacheFirst()]) {
			break
		}
	}
	return out, nil
}

// Snapshot implements raft.Storage.
func (s *logStore) Snapshot() (*pb.Snapshot, error) {
	if s.snapshot == nil {
		return nil, raft.ErrSnapshotTemporarilyUnavailable
	}
	return s.snapshot()
}

// append adds Ready's entries to b, replacing any of the log they conflict with.
func (s *logStore) append(b *storage.Batch, ents []*pb.Entry) error {
	if len(ents) == 0 {
		return nil
	}
	first, last := ents[0].GetIndex(), ents[len(ents)-1].GetIndex()
	if first < s.first || first > s.last+1 {
		return fmt.Errorf("group %d: appending entries from %d to a log of [%d, %d]", s.group, first, s.first, s.last)
	}
	var key, val []byte
	for _, e := range ents {
		key = storage.RaftKey(key[:0], s.group, storage.RaftEntry, e.GetIndex())
		var err error
		if val, err = (proto.MarshalOptions{}).MarshalAppend(val[:0], e); err != nil {
			return err
		}
		if err := b.Set(key, val); err != nil {
			return err
		}
	}
	if last < s.last {
		span := storage.RaftLogSpan(s.group, last+1, s.last+1)
		if err := b.DeleteRange(span.Start, span.End); err != nil {
			return err
		}
	}
	// The cache keeps its entries before first, if they are contiguous with it.
	if first < s.cacheFirst() || len(s.cache) == 0 && first != s.last+1 {
		s.cache, s.cacheBytes = nil, 0
	} else {
		keep := int(first - s.cacheFirst())
		for _, e := range s.cache[keep:] {
			s.cacheBytes -= len(e.GetData())
		}
		s.cache = s.cache[:keep]
	}
	for _, e := range ents {
		s.cache = append(s.cache, e)
		s.cacheBytes += len(e.GetData())
	}
	s.last = last
	for len(s.cache) > cacheEntries || s.cacheBytes > cacheBytes && len(s.cache) > 1 {
		s.cacheBytes -= len(s.cache[0].GetData())
		s.cache = s.cache[1:]
	}
	return nil
}

// setHardState adds a hard state to b.
func (s *logStore) setHardState(b *storage.Batch, hs *pb.HardState) error {
	v, err := proto.Marshal(hs)
	if err != nil {
		return err
	}
	s.hard = proto.Clone(hs).(*pb.HardState)
	return b.Set(storage.RaftKey(nil, s.group, storage.RaftHardState, 0), v)
}

// truncate removes the entries up to index upto from the log (keeping their last one's term).
func (s *logStore) truncate(b *storage.Batch, upto uint64) error {
	if upto < s.first || upto > s.last {
		return nil
	}
	term, err := s.Term(upto)
	if err != nil {
		return err
	}
	span := storage.RaftLogSpan(s.group, s.first, upto+1)
	if err := b.DeleteRange(span.Start, span.End); err != nil {
		return err
	}
	if err := b.Set(storage.RaftKey(nil, s.group, storage.RaftTruncated, 0), truncatedValue(upto, term)); err != nil {
		return err
	}
	s.first, s.prevTerm = upto+1, term
	if upto >= s.cacheFirst() {
		drop := int(upto + 1 - s.cacheFirst())
		for _, e := range s.cache[:drop] {
			s.cacheBytes -= len(e.GetData())
		}
		s.cache = s.cache[drop:]
	}
	return nil
}

// restart makes the log an empty one after index, of term: what a snapshot leaves.
func (s *logStore) restart(index, term uint64) {
	s.first, s.last, s.prevTerm = index+1, index, term
	s.cache, s.cacheBytes = nil, 0
}

// errStopped is what the host's calls return once it is closed.
var errStopped = errors.New("replication: the host is stopped")
