package cql

import (
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/partita-db/partita/internal/cqlexec"
)

// eventBuffer is how many schema changes may wait for a slow connection before it misses some
// (drivers also re-read the schema on their own schedule).
const eventBuffer = 64

// eventStream is the stream id of server-pushed EVENT frames.
const eventStream = -1

// eventKind is the kind of an event a connection may register for.
type eventKind int

const (
	schemaEvents eventKind = iota
	topologyEvents
	statusEvents
)

var eventKinds = map[primitive.EventType]eventKind{
	primitive.EventTypeSchemaChange:   schemaEvents,
	primitive.EventTypeTopologyChange: topologyEvents,
	primitive.EventTypeStatusChange:   statusEvents,
}

// register subscribes the connection to the events it names, and starts its event writer with
// the first. On a node alone only SCHEMA_CHANGE ever fires; in a cluster the others report the
// nodes (topology.go).
func (c *conn) register(m *message.Register) message.Message {
	for _, t := range m.EventTypes {
		if k, ok := eventKinds[t]; ok {
			c.registered[k].Store(true)
		}
	}
	if c.writing.CompareAndSwap(false, true) {
		go c.writeEvents()
	}
	return &message.Ready{}
}

// writeEvents sends the connection's events until it closes.
func (c *conn) writeEvents() {
	for {
		select {
		case ev := <-c.events:
			c.send(eventStream, ev)
		case <-c.done:
			return
		}
	}
}

// broadcast hands a schema change to every connection registered for it, never blocking the
// executor that reports it.
func (s *Server) broadcast(ch cqlexec.SchemaChange) {
	s.publish(schemaEvents, &message.SchemaChangeEvent{
		ChangeType: primitive.SchemaChangeType(ch.Change), Target: primitive.SchemaChangeTarget(ch.Target),
		Keyspace: ch.Keyspace, Object: ch.Name,
	})
}

// publish hands ev to every connection registered for its kind; a connection that does not
// read its events misses it (drivers also refresh on their own schedule).
func (s *Server) publish(kind eventKind, ev message.Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		if !c.registered[kind].Load() {
			continue
		}
		select {
		case c.events <- ev:
		default:
			s.log.Warn("cql: a connection is not reading its events; dropped one", "remote", c.nc.RemoteAddr(), "event", ev)
		}
	}
}
