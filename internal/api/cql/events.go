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

// register subscribes the connection to the events it names. Only SCHEMA_CHANGE ever fires:
// one node has no topology or status to change.
func (c *conn) register(m *message.Register) message.Message {
	for _, t := range m.EventTypes {
		if t == primitive.EventTypeSchemaChange && c.registered.CompareAndSwap(false, true) {
			go c.writeEvents()
		}
	}
	return &message.Ready{}
}

// writeEvents sends the connection's schema change events until it closes.
func (c *conn) writeEvents() {
	for {
		select {
		case ch := <-c.events:
			c.send(eventStream, &message.SchemaChangeEvent{
				ChangeType: primitive.SchemaChangeType(ch.Change), Target: primitive.SchemaChangeTarget(ch.Target),
				Keyspace: ch.Keyspace, Object: ch.Name,
			})
		case <-c.done:
			return
		}
	}
}

// broadcast hands a schema change to every registered connection, never blocking the
// executor that reports it.
func (s *Server) broadcast(ch cqlexec.SchemaChange) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		if !c.registered.Load() {
			continue
		}
		select {
		case c.events <- ch:
		default:
			s.log.Warn("cql: a connection is not reading its events; dropped a schema change event", "remote", c.nc.RemoteAddr())
		}
	}
}
