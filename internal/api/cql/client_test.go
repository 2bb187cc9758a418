package cql

import (
	"bufio"
	"net"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/frame"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// client is a minimal native protocol client over the codec, for driving the server frame by
// frame.
type client struct {
	t     testing.TB
	nc    net.Conn
	br    *bufio.Reader
	codec frame.RawCodec
	lz4   bool
}

func dial(t testing.TB, addr string) *client {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	// A hang guard: no test waits this long for an answer that should come.
	nc.SetDeadline(time.Now().Add(30 * time.Second))
	return &client{t: t, nc: nc, br: bufio.NewReader(nc), codec: frame.NewRawCodecWithCompression(lz4Body{max: 1 << 30})}
}

func (c *client) send(stream int16, m message.Message) {
	c.t.Helper()
	f := frame.NewFrame(primitive.ProtocolVersion4, stream, m)
	f.SetCompress(c.lz4)
	if err := c.codec.EncodeFrame(f, c.nc); err != nil {
		c.t.Fatal(err)
	}
}

func (c *client) recv() *frame.Frame {
	c.t.Helper()
	f, err := c.codec.DecodeFrame(c.br)
	if err != nil {
		c.t.Fatalf("reading a response: %v", err)
	}
	return f
}

// call sends m on stream 1 and returns the answer's message.
func (c *client) call(m message.Message) message.Message {
	c.t.Helper()
	c.send(1, m)
	f := c.recv()
	if f.Header.StreamId != 1 {
		c.t.Fatalf("answer on stream %d, want 1", f.Header.StreamId)
	}
	return f.Body.Message
}

// login runs STARTUP and the SASL PLAIN exchange, failing the test unless it succeeds.
func (c *client) login(user, password string) {
	c.t.Helper()
	if m, ok := c.call(message.NewStartup()).(*message.Authenticate); !ok || m.Authenticator != authenticator {
		c.t.Fatalf("STARTUP answered %v", m)
	}
	if m, ok := c.call(&message.AuthResponse{Token: plain(user, password)}).(*message.AuthSuccess); !ok {
		c.t.Fatalf("AUTH_RESPONSE answered %v", m)
	}
}

func plain(user, password string) []byte { return []byte("\x00" + user + "\x00" + password) }

// expectClosed fails unless the server closed the connection.
func (c *client) expectClosed() {
	c.t.Helper()
	if n, err := c.br.ReadByte(); err == nil {
		c.t.Fatalf("read %#x after the error; want the connection closed", n)
	}
}

func query(text string, values ...[]byte) *message.Query {
	q := &message.Query{Query: text, Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne}}
	for _, v := range values {
		q.Options.PositionalValues = append(q.Options.PositionalValues, primitive.NewValue(v))
	}
	return q
}

// code is the error code of m, or -1 if m is not an error.
func code(m message.Message) int {
	if e, ok := m.(message.Error); ok {
		return int(e.GetErrorCode())
	}
	return -1
}
