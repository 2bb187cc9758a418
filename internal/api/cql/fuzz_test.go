package cql

import (
	"bytes"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/frame"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// scriptConn is a net.Conn whose reads come from a fixed input and whose writes are kept.
type scriptConn struct {
	in  *bytes.Reader
	mu  sync.Mutex
	out bytes.Buffer
}

func (s *scriptConn) Read(b []byte) (int, error) { return s.in.Read(b) }
func (s *scriptConn) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.Write(b)
}
func (s *scriptConn) Close() error                     { return nil }
func (s *scriptConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (s *scriptConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (s *scriptConn) SetDeadline(time.Time) error      { return nil }
func (s *scriptConn) SetReadDeadline(time.Time) error  { return nil }
func (s *scriptConn) SetWriteDeadline(time.Time) error { return nil }

func frameBytes(f testing.TB, stream int16, m message.Message) []byte {
	var b bytes.Buffer
	if err := frame.NewRawCodec().EncodeFrame(frame.NewFrame(primitive.ProtocolVersion4, stream, m), &b); err != nil {
		f.Fatal(err)
	}
	return b.Bytes()
}

// FuzzFrame feeds arbitrary bytes to a connection, signed in or not (the first byte's low
// bit): it must never panic, must end when the input does, and everything it writes must be
// well-formed response frames.
func FuzzFrame(f *testing.F) {
	login := append(frameBytes(f, 1, message.NewStartup()), frameBytes(f, 2, &message.AuthResponse{Token: plain(testUser, testKey)})...)
	f.Add(append([]byte{0}, login...))
	f.Add(append(append([]byte{0}, login...), frameBytes(f, 3, query("USE ks"))...))
	f.Add(append([]byte{1}, frameBytes(f, 3, query("SELECT k, v FROM ks.kv"))...))
	f.Add(append([]byte{1}, frameBytes(f, 4, &message.Prepare{Query: "INSERT INTO kv (k, v) VALUES (?, ?)"})...))
	f.Add(append([]byte{1}, frameBytes(f, 5, &message.Batch{Children: []*message.BatchChild{{Query: "INSERT INTO kv (k, v) VALUES (?, ?)"}}})...))
	f.Add(append([]byte{1}, frameBytes(f, 6, &message.Register{EventTypes: []primitive.EventType{primitive.EventTypeSchemaChange}})...))
	f.Add(append([]byte{1}, frameBytes(f, 7, execute(make([]byte, 16), true, []byte("k")))...))
	f.Add([]byte{0, 0x42, 0, 0, 1, 1, 0, 0, 0, 0})
	f.Add([]byte{0, 1, 0, 1, 5, 0, 0, 0, 0})
	x := newFakeExec()
	x.noBlocking = true
	srv := New(x, Options{Username: testUser, Key: testKey, MaxFrameSize: 1 << 16, MaxInFlight: 4})
	codec := frame.NewRawCodec()
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		sc := &scriptConn{in: bytes.NewReader(data[1:])}
		c := newConn(srv, sc)
		if data[0]&1 == 1 {
			c.state = stateReady
		}
		c.serve()
		out := bytes.NewReader(sc.out.Bytes())
		for out.Len() > 0 {
			h, err := codec.DecodeHeader(out)
			if err != nil && out.Len() > 0 {
				// Only a version refusal is written in another version's layout.
				return
			}
			if err != nil || !h.IsResponse {
				t.Fatalf("wrote a malformed response: %v", err)
			}
			if err := codec.DiscardBody(h, out); err != nil {
				t.Fatalf("wrote a truncated response: %v", err)
			}
		}
	})
}
