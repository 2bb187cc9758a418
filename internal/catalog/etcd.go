package catalog

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Etcd is the catalog in the cluster's etcd, under one prefix: the counters at
// prefix+"counters" and each record at prefix+kind+"/"+number (eight hex digits). Every
// change writes the counters, so their modification revision is the catalog's revision.
type Etcd struct {
	client  *clientv3.Client
	prefix  string
	timeout time.Duration
}

// NewEtcd is the catalog kept by client under prefix.
func NewEtcd(client *clientv3.Client, prefix string) *Etcd {
	return &Etcd{client: client, prefix: prefix, timeout: 10 * time.Second}
}

var _ Backend = (*Etcd)(nil)

// MaxChangeRecords bounds the records one change writes and deletes: each is an operation of
// one etcd transaction, which the control plane lets hold this many (a database's deletion
// deletes its containers and users with it).
const MaxChangeRecords = 4000

func (s *Etcd) countersKey() string { return s.prefix + "counters" }

func (s *Etcd) key(k Key) string { return fmt.Sprintf("%s%c/%08x", s.prefix, k.Kind, k.Num) }

// parseKey reads a record's key; ok is false for the counters.
func (s *Etcd) parseKey(key []byte) (k Key, ok bool, err error) {
	rest := string(key[len(s.prefix):])
	if rest == "counters" {
		return Key{}, false, nil
	}
	if len(rest) != 10 || rest[1] != '/' || !Kind(rest[0]).valid() {
		return Key{}, false, fmt.Errorf("catalog: a key %q that is no record's", key)
	}
	n, err := strconv.ParseUint(rest[2:], 16, 32)
	if err != nil {
		return Key{}, false, fmt.Errorf("catalog: a key %q that is no record's", key)
	}
	return Key{Kind: Kind(rest[0]), Num: uint32(n)}, true, nil
}

// Load reads the whole catalog at one revision.
func (s *Etcd) Load() (Contents, error) {
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	resp, err := s.client.Get(ctx, s.prefix, clientv3.WithPrefix())
	if err != nil {
		return Contents{}, err
	}
	var c Contents
	byKind := map[Kind][]Record{}
	for _, kv := range resp.Kvs {
		k, ok, err := s.parseKey(kv.Key)
		if err != nil {
			return Contents{}, err
		}
		if !ok {
			c.Counters, c.Revision = kv.Value, kv.ModRevision
			continue
		}
		byKind[k.Kind] = append(byKind[k.Kind], Record{Key: k, Value: kv.Value})
	}
	for _, k := range kindOrder { // etcd answers in key order, which is number order per kind
		c.Records = append(c.Records, byKind[k]...)
	}
	return c, nil
}

// Revision is the catalog's revision now (a linearizable read): every change committed before
// the call has it or a smaller one.
func (s *Etcd) Revision() (int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	resp, err := s.client.Get(ctx, s.countersKey())
	if err != nil || len(resp.Kvs) == 0 {
		return 0, err
	}
	return resp.Kvs[0].ModRevision, nil
}

// Commit applies ch in one etcd transaction, if the catalog's revision is still ch.After,
// and returns the revision of the change; ErrStale otherwise.
func (s *Etcd) Commit(ch Change) (int64, error) {
	if err := ch.check(); err != nil {
		return 0, err
	}
	if n := len(ch.Put) + len(ch.Delete); n > MaxChangeRecords {
		return 0, fmt.Errorf("catalog: a change of %d records; at most %d", n, MaxChangeRecords)
	}
	ops := []clientv3.Op{clientv3.OpPut(s.countersKey(), string(ch.Counters))}
	for _, r := range ch.Put {
		ops = append(ops, clientv3.OpPut(s.key(r.Key), string(r.Value)))
	}
	for _, k := range ch.Delete {
		ops = append(ops, clientv3.OpDelete(s.key(k)))
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	resp, err := s.client.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(s.countersKey()), "=", ch.After)).
		Then(ops...).
		Commit()
	if err != nil {
		return 0, err
	}
	if !resp.Succeeded {
		return 0, ErrStale
	}
	return resp.Header.Revision, nil
}

// Event is one change to the catalog, as Watch sees it, or the end of the watch.
type Event struct {
	Revision int64
	Counters []byte
	Put      []Record
	Delete   []Key
	// Err ends the watch: ErrCompacted, the context's error, or what etcd answered.
	Err error
}

// ErrCompacted ends a watch whose start etcd no longer holds: Load again, and watch from there.
var ErrCompacted = errors.New("catalog: the changes since that revision are compacted away")

// Watch sends every change to the catalog after revision after, one event per change, in
// order, until ctx ends or the watch fails; its last event then carries the error, and the
// channel is closed.
func (s *Etcd) Watch(ctx context.Context, after int64) <-chan Event {
	out := make(chan Event, 16)
	go func() {
		defer close(out)
		fail := func(err error) {
			select {
			case out <- Event{Err: err}:
			case <-ctx.Done():
			}
		}
		wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
		defer cancel()
		for resp := range s.client.Watch(wctx, s.prefix, clientv3.WithPrefix(), clientv3.WithRev(after+1)) {
			if resp.CompactRevision != 0 {
				fail(ErrCompacted)
				return
			}
			if err := resp.Err(); err != nil {
				fail(err)
				return
			}
			// A response may hold the events of several changes; a change's events share
			// its revision.
			var ev *Event
			for _, e := range resp.Events {
				rev := e.Kv.ModRevision
				if ev != nil && ev.Revision != rev {
					if !send(ctx, out, *ev) {
						return
					}
					ev = nil
				}
				if ev == nil {
					ev = &Event{Revision: rev}
				}
				k, ok, err := s.parseKey(e.Kv.Key)
				switch {
				case err != nil:
					fail(err)
					return
				case !ok:
					ev.Counters = e.Kv.Value
				case e.Type == clientv3.EventTypeDelete:
					ev.Delete = append(ev.Delete, k)
				default:
					ev.Put = append(ev.Put, Record{Key: k, Value: e.Kv.Value})
				}
			}
			if ev != nil && !send(ctx, out, *ev) {
				return
			}
		}
		err := ctx.Err()
		if err == nil {
			err = errors.New("catalog: etcd ended the watch")
		}
		fail(err)
	}()
	return out
}

func send(ctx context.Context, out chan<- Event, ev Event) bool {
	select {
	case out <- ev:
		return true
	case <-ctx.Done():
		return false
	}
}
