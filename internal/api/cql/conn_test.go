package cql

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"reflect"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// A driver pipelines requests on many streams of one connection: they run at once, and each
// is answered on its stream.
func TestConcurrentStreams(t *testing.T) {
	x := newFakeExec()
	const n = 16
	x.waitN = n
	_, addr := startServer(t, x, Options{})
	c := dial(t, addr)
	c.login(testUser, testKey)
	for i := int16(1); i <= n; i++ {
		c.send(i, query("SELECT wait"))
	}
	seen := map[int16]bool{}
	for range n {
		f := c.recv()
		if _, ok := f.Body.Message.(*message.VoidResult); !ok {
			t.Fatalf("stream %d answered %v", f.Header.StreamId, f.Body.Message)
		}
		if seen[f.Header.StreamId] || f.Header.StreamId < 1 || f.Header.StreamId > n {
			t.Fatalf("unexpected or repeated answer on stream %d", f.Header.StreamId)
		}
		seen[f.Header.StreamId] = true
	}
}

// No more than MaxInFlight requests of one connection run at once.
func TestInFlightBound(t *testing.T) {
	x := newFakeExec()
	_, addr := startServer(t, x, Options{MaxInFlight: 2})
	c := dial(t, addr)
	c.login(testUser, testKey)
	const n = 8
	for i := int16(1); i <= n; i++ {
		c.send(i, query("SELECT gate"))
	}
	<-x.gateStarted
	<-x.gateStarted
	for i := 0; i < n; i++ {
		x.gate <- struct{}{}
		if i < n-2 {
			<-x.gateStarted
		}
	}
	for range n {
		c.recv()
	}
	if x.gateMax != 2 {
		t.Fatalf("%d requests ran at once, want MaxInFlight = 2", x.gateMax)
	}
}

// Malformed frames are answered with a PROTOCOL_ERROR, then the connection is closed.
func TestMalformedFrames(t *testing.T) {
	_, addr := startServer(t, newFakeExec(), Options{MaxFrameSize: 1024})
	header := func(flags byte, op primitive.OpCode, length uint32) []byte {
		return binary.BigEndian.AppendUint32([]byte{4, flags, 0, 3, byte(op)}, length)
	}
	cases := map[string][]byte{
		"response direction":         append(header(0, primitive.OpCodeOptions, 0), 0)[:9],
		"over the size limit":        header(0, primitive.OpCodeQuery, 2048),
		"negative length":            header(0, primitive.OpCodeQuery, 0xFFFFFFFF),
		"response opcode":            header(0, primitive.OpCodeResult, 0),
		"unknown opcode":             header(0, 0x33, 0),
		"truncated message":          append(header(0, primitive.OpCodeStartup, 4), 0, 9, 0, 1),
		"compressed, not negotiated": append(header(1, primitive.OpCodeOptions, 5), 0, 0, 0, 1, 0),
	}
	cases["response direction"][0] = 0x84
	for name, raw := range cases {
		c := dial(t, addr)
		if _, err := c.nc.Write(raw); err != nil {
			t.Fatal(err)
		}
		f := c.recv()
		if code(f.Body.Message) != 0x000A || f.Header.StreamId != 3 {
			t.Errorf("%s: answered %v on stream %d, want a PROTOCOL_ERROR on stream 3", name, f.Body.Message, f.Header.StreamId)
		}
		c.expectClosed()
	}
}

// A panic in a request is a SERVER_ERROR for it, and the connection goes on.
func TestPanicIsServerError(t *testing.T) {
	_, addr := startServer(t, newFakeExec(), Options{})
	c := dial(t, addr)
	c.login(testUser, testKey)
	if m := c.call(query("SELECT panic")); code(m) != 0x0000 {
		t.Fatalf("a panicking request answered %v, want SERVER_ERROR", m)
	}
	if m := c.call(query("USE ks")); !reflect.DeepEqual(m, &message.SetKeyspaceResult{Keyspace: "ks"}) {
		t.Fatalf("after the panic, USE answered %v", m)
	}
}

// With COMPRESSION lz4, requests and responses after STARTUP are compressed both ways.
func TestLZ4(t *testing.T) {
	_, addr := startServer(t, newFakeExec(), Options{})
	c := dial(t, addr)
	if m := c.call(message.NewStartup("COMPRESSION", "lz4")); code(m) != -1 {
		t.Fatalf("STARTUP with lz4 answered %v", m)
	}
	c.lz4 = true
	c.send(1, &message.AuthResponse{Token: plain(testUser, testKey)})
	f := c.recv()
	if _, ok := f.Body.Message.(*message.AuthSuccess); !ok || !f.Header.Flags.Contains(primitive.HeaderFlagCompressed) {
		t.Fatalf("compressed AUTH_RESPONSE answered %v with flags %v", f.Body.Message, f.Header.Flags)
	}
	c.call(query("USE ks"))
	for i := range 40 {
		c.call(query("INSERT INTO kv (k, v) VALUES (?, ?)", []byte{byte('a' + i%26), byte('a' + i/26)}, int32Bytes(int32(i))))
	}
	c.send(1, query("SELECT k, v FROM ks.kv"))
	f = c.recv()
	rows, ok := f.Body.Message.(*message.RowsResult)
	if !ok || len(rows.Data) != 40 || !f.Header.Flags.Contains(primitive.HeaderFlagCompressed) {
		t.Fatalf("compressed SELECT answered %v with flags %v, want 40 rows compressed", f.Body.Message, f.Header.Flags)
	}
	// A driver may still send a frame uncompressed.
	c.lz4 = false
	if m := c.call(query("USE ks")); code(m) != -1 {
		t.Fatalf("uncompressed USE answered %v", m)
	}
}

// The body compressor round-trips empty, incompressible and highly compressible bodies, and
// refuses a declared length over the limit.
func TestLZ4Body(t *testing.T) {
	z := lz4Body{max: 1 << 20}
	random := make([]byte, 5000)
	for i := range random {
		random[i] = byte(i*7919 ^ i>>3*31)
	}
	for _, in := range [][]byte{{}, []byte("x"), random, bytes.Repeat([]byte("a"), 100000)} {
		var packed, out bytes.Buffer
		if err := z.CompressWithLength(bytes.NewReader(in), &packed); err != nil {
			t.Fatal(err)
		}
		if err := z.DecompressWithLength(bytes.NewReader(packed.Bytes()), &out); err != nil {
			t.Fatalf("%d bytes: %v", len(in), err)
		}
		if !bytes.Equal(out.Bytes(), in) {
			t.Fatalf("%d bytes came back as %d", len(in), out.Len())
		}
	}
	var packed bytes.Buffer
	z.CompressWithLength(bytes.NewReader(make([]byte, 2<<20)), &packed)
	if err := z.DecompressWithLength(&packed, io.Discard); err == nil {
		t.Fatal("a body declaring 2 MB decompressed under a 1 MB limit")
	}
}

// Shutdown stops taking requests but lets a running one answer before it returns.
func TestShutdownLetsRequestsFinish(t *testing.T) {
	x := newFakeExec()
	s := New(x, Options{Username: testUser, Key: testKey})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	c := dial(t, ln.Addr().String())
	c.login(testUser, testKey)
	c.send(5, query("SELECT gate"))
	<-x.gateStarted
	stopped := make(chan error, 1)
	go func() { stopped <- s.Shutdown(context.Background()) }()
	if err := <-served; !errors.Is(err, ErrServerClosed) {
		t.Fatalf("Serve returned %v", err)
	}
	x.gate <- struct{}{}
	if f := c.recv(); f.Header.StreamId != 5 || code(f.Body.Message) != -1 {
		t.Fatalf("the running request answered %v on stream %d", f.Body.Message, f.Header.StreamId)
	}
	if err := <-stopped; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	c.expectClosed()
}
