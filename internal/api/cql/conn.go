package cql

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/frame"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/partita-db/partita/internal/cqlexec"
	"github.com/partita-db/partita/internal/tracing"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// state is where a connection is in its handshake; only the reading goroutine moves it.
type state uint8

const (
	stateNew   state = iota // before STARTUP: only OPTIONS and STARTUP
	stateAuth               // STARTUP done: only OPTIONS and AUTH_RESPONSE
	stateReady              // signed in: everything
)

// conn is one client connection. One goroutine reads its frames and runs the handshake;
// each request after it runs on a goroutine of its own, at most Options.MaxInFlight at once.
type conn struct {
	srv   *Server
	nc    net.Conn
	fr    frameReader
	state state // the reading goroutine's

	// compress is set once STARTUP asked for LZ4: every later response is compressed.
	compress atomic.Bool
	wmu      sync.Mutex // held while writing one whole frame

	smu     sync.Mutex
	session cqlexec.Session // USE's keyspace and the key's rights; copied for each request

	slots chan struct{}  // a token per running request
	reqs  sync.WaitGroup // running requests

	// events carries the events the connection REGISTERed for (registered) to its event
	// writer.
	events     chan message.Message
	registered [3]atomic.Bool // by eventKind
	writing    atomic.Bool    // the event writer runs
	done       chan struct{}  // closed when the connection is closed
}

func newConn(s *Server, nc net.Conn) *conn {
	c := &conn{
		srv: s, nc: nc,
		fr:     frameReader{r: bufio.NewReaderSize(nc, 64<<10), max: s.opts.MaxFrameSize, codec: s.plain},
		slots:  make(chan struct{}, s.opts.MaxInFlight),
		events: make(chan message.Message, eventBuffer),
		done:   make(chan struct{}),
	}
	// system.local shows the address the client reached as the node's: drivers connect to
	// the node by it.
	if a, ok := nc.LocalAddr().(*net.TCPAddr); ok {
		c.session.Addr = a.IP
	}
	return c
}

// serve reads and dispatches frames until the connection fails, a frame is malformed, or the
// server stops reading; then it waits for the running requests to answer and closes.
func (c *conn) serve() {
	defer c.close()
	for {
		f, err := c.fr.read()
		if err != nil {
			c.refuse(err)
			return
		}
		if c.srv.isClosing() {
			return
		}
		c.dispatch(f)
	}
}

func (c *conn) close() {
	c.reqs.Wait()
	close(c.done)
	c.nc.Close()
}

// stopReading makes the reading goroutine's next read fail, so that it takes no new request.
func (c *conn) stopReading() { c.nc.SetReadDeadline(time.Now()) }

// refuse answers a frame that cannot be served (frame.go) before the connection closes.
func (c *conn) refuse(err error) {
	var bv *badVersion
	var bf *badFrame
	switch {
	case errors.As(err, &bv):
		c.wmu.Lock()
		err = writeVersionError(c.nc, bv.version, bv.stream)
		c.wmu.Unlock()
	case errors.As(err, &bf):
		c.srv.log.Debug("cql: malformed frame; closing the connection", "remote", c.nc.RemoteAddr(), "err", bf.msg)
		c.send(bf.stream, &message.ProtocolError{ErrorMessage: bf.msg})
	default:
		return // the connection is gone, or the server stopped reading it
	}
	if err == nil {
		c.linger()
	}
}

// linger lets an error answer reach the client before the connection closes: closing with
// unread bytes would reset the connection, and the client could lose the answer.
func (c *conn) linger() {
	if cw, ok := c.nc.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
	c.nc.SetReadDeadline(time.Now().Add(time.Second))
	io.CopyN(io.Discard, c.nc, 1<<20)
}

// dispatch answers the handshake's messages at once and starts the others.
func (c *conn) dispatch(f *frame.Frame) {
	stream := f.Header.StreamId
	switch m := f.Body.Message.(type) {
	case *message.Options:
		c.send(stream, supported())
		return
	case *message.Startup:
		c.send(stream, c.startup(m))
		return
	case *message.AuthResponse:
		c.send(stream, c.authResponse(m))
		return
	}
	if c.state != stateReady {
		c.send(stream, c.unexpected(f.Header.OpCode))
		return
	}
	var run func(context.Context) message.Message
	switch m := f.Body.Message.(type) {
	case *message.Register:
		c.send(stream, c.register(m))
		return
	case *message.Query:
		run = func(ctx context.Context) message.Message { return c.query(ctx, m) }
	case *message.Prepare:
		run = func(context.Context) message.Message { return c.prepare(m) }
	case *message.Execute:
		run = func(ctx context.Context) message.Message { return c.execute(ctx, m) }
	case *message.Batch:
		run = func(ctx context.Context) message.Message { return c.batch(ctx, m) }
	default: // DSE's REVISE_REQUEST
		c.send(stream, &message.ProtocolError{ErrorMessage: fmt.Sprintf("Unsupported message %v", f.Header.OpCode)})
		return
	}
	c.slots <- struct{}{} // blocks reading while MaxInFlight requests run
	c.reqs.Add(1)
	go func() {
		defer func() {
			<-c.slots
			c.reqs.Done()
		}()
		c.send(stream, c.safely(f.Header.OpCode, run))
	}()
}

// safely runs one request in its span, turning a panic into a SERVER_ERROR.
func (c *conn) safely(op primitive.OpCode, run func(context.Context) message.Message) (m message.Message) {
	ctx, span := tracing.Start(context.Background(), "cql "+op.String(), trace.SpanKindServer)
	defer func() {
		if r := recover(); r != nil {
			c.srv.log.Error("cql: request panicked", "panic", r, "stack", string(debug.Stack()))
			m = &message.ServerError{ErrorMessage: fmt.Sprintf("internal error: %v", r)}
		}
		if e, failed := m.(message.Error); failed {
			span.SetStatus(codes.Error, e.GetErrorMessage())
		}
		span.End()
	}()
	return run(ctx)
}

// send writes one response frame. A response that cannot be encoded, or is over the frame
// size limit, is replaced by a SERVER_ERROR; a failed write closes the connection.
func (c *conn) send(stream int16, m message.Message) {
	buf, err := c.encode(stream, m)
	if err != nil {
		c.srv.log.Error("cql: cannot encode a response", "message", m, "err", err)
		if buf, err = c.encode(stream, &message.ServerError{ErrorMessage: "cannot encode the response: " + err.Error()}); err != nil {
			c.nc.Close()
			return
		}
	}
	c.wmu.Lock()
	_, err = c.nc.Write(buf)
	c.wmu.Unlock()
	if err != nil {
		c.nc.Close() // the reading goroutine sees it and ends the connection
	}
}

func (c *conn) encode(stream int16, m message.Message) ([]byte, error) {
	f := frame.NewFrame(version, stream, m)
	codec := c.srv.plain
	if c.compress.Load() {
		f.SetCompress(true)
		codec = c.srv.lz4
	}
	var buf bytes.Buffer
	if err := codec.EncodeFrame(f, &buf); err != nil {
		return nil, err
	}
	if n := buf.Len() - 9; n > c.srv.opts.MaxFrameSize {
		return nil, fmt.Errorf("the response of %d bytes is over the frame size limit of %d", n, c.srv.opts.MaxFrameSize)
	}
	return buf.Bytes(), nil
}

// sessionNow is a copy of the session for one request, so that a concurrent USE does not change
// it under the executor.
func (c *conn) sessionNow() cqlexec.Session {
	c.smu.Lock()
	defer c.smu.Unlock()
	return c.session
}

// use records the keyspace a USE chose.
func (c *conn) use(keyspace string) {
	c.smu.Lock()
	c.session.Keyspace = keyspace
	c.smu.Unlock()
}
