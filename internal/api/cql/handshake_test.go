package cql

import (
	"encoding/binary"
	"io"
	"reflect"
	"strconv"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

func TestHandshake(t *testing.T) {
	_, addr := startServer(t, newFakeExec(), Options{})
	c := dial(t, addr)

	sup, ok := c.call(&message.Options{}).(*message.Supported)
	want := map[string][]string{"CQL_VERSION": {"3.4.5"}, "COMPRESSION": {"lz4"}}
	if !ok || !reflect.DeepEqual(sup.Options, want) {
		t.Fatalf("OPTIONS answered %v, want SUPPORTED %v", sup, want)
	}
	if m := c.call(query("USE ks")); code(m) != 0x000A {
		t.Fatalf("QUERY before STARTUP answered %v, want a protocol error", m)
	}
	if m := c.call(&message.AuthResponse{Token: plain(testUser, testKey)}); code(m) != 0x000A {
		t.Fatalf("AUTH_RESPONSE before STARTUP answered %v, want a protocol error", m)
	}
	if m := c.call(message.NewStartup()); !reflect.DeepEqual(m, &message.Authenticate{Authenticator: "org.apache.cassandra.auth.PasswordAuthenticator"}) {
		t.Fatalf("STARTUP answered %v", m)
	}
	if m := c.call(query("USE ks")); code(m) != 0x000A {
		t.Fatalf("QUERY before AUTH_RESPONSE answered %v, want a protocol error", m)
	}
	for _, token := range [][]byte{plain(testUser, testBadKey), plain("someone", testKey), plain(testUser, ""), []byte("no separators")} {
		if m := c.call(&message.AuthResponse{Token: token}); code(m) != 0x0100 {
			t.Fatalf("AUTH_RESPONSE %q answered %v, want AUTHENTICATION_ERROR", token, m)
		}
	}
	if m := c.call(&message.AuthResponse{Token: []byte("authz\x00" + testUser + "\x00" + testKey)}); !reflect.DeepEqual(m, &message.AuthSuccess{}) {
		t.Fatalf("good credentials answered %v", m)
	}
	if m := c.call(query("USE ks")); !reflect.DeepEqual(m, &message.SetKeyspaceResult{Keyspace: "ks"}) {
		t.Fatalf("USE answered %v", m)
	}
	if m := c.call(message.NewStartup()); code(m) != 0x000A {
		t.Fatalf("a second STARTUP answered %v, want a protocol error", m)
	}
	// The connection is still usable after those refusals.
	if m := c.call(query("INSERT INTO kv (k, v) VALUES (?, ?)", []byte("a"), int32Bytes(1))); !reflect.DeepEqual(m, &message.VoidResult{}) {
		t.Fatalf("INSERT answered %v", m)
	}
}

func TestStartupRefusals(t *testing.T) {
	_, addr := startServer(t, newFakeExec(), Options{})
	for _, opts := range []map[string]string{
		{},                       // no CQL_VERSION
		{"CQL_VERSION": "4.0.0"}, // not CQL 3
		{"CQL_VERSION": "3.0.0", "COMPRESSION": "snappy"}, // not implemented
	} {
		c := dial(t, addr)
		if m := c.call(&message.Startup{Options: opts}); code(m) != 0x000A {
			t.Errorf("STARTUP %v answered %v, want a protocol error", opts, m)
		}
	}
}

// The read-only key signs in to a session that may read but not write.
func TestReadOnlyKey(t *testing.T) {
	_, addr := startServer(t, newFakeExec(), Options{})
	c := dial(t, addr)
	c.login(testUser, testROKey)
	c.call(query("USE ks"))
	if m := c.call(query("INSERT INTO kv (k, v) VALUES (?, ?)", []byte("a"), int32Bytes(1))); code(m) != 0x2100 {
		t.Fatalf("INSERT with the read-only key answered %v, want UNAUTHORIZED", m)
	}
	if m, ok := c.call(query("SELECT k, v FROM ks.kv")).(*message.RowsResult); !ok || len(m.Data) != 0 {
		t.Fatalf("SELECT with the read-only key answered %v", m)
	}
}

// Every version but 4 is refused in the client's own version, with Cassandra's message, and
// the connection is closed; drivers step down from it.
func TestUnsupportedVersions(t *testing.T) {
	_, addr := startServer(t, newFakeExec(), Options{})
	startup := []byte{0, 1, 0, 11, 'C', 'Q', 'L', '_', 'V', 'E', 'R', 'S', 'I', 'O', 'N', 0, 5, '3', '.', '0', '.', '0'}
	for _, v := range []byte{1, 2, 3, 5, 6, 0x41, 0x42} {
		c := dial(t, addr)
		var req []byte
		if v < 3 {
			req = []byte{v, 0, 7, byte(primitive.OpCodeStartup)}
		} else {
			req = []byte{v, 0, 0, 7, byte(primitive.OpCodeStartup)}
		}
		req = binary.BigEndian.AppendUint32(req, uint32(len(startup)))
		if _, err := c.nc.Write(append(req, startup...)); err != nil {
			t.Fatal(err)
		}
		hlen := 9
		if v < 3 {
			hlen = 8
		}
		h := make([]byte, hlen)
		if _, err := io.ReadFull(c.br, h); err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		var stream int
		if v < 3 {
			stream = int(h[2])
		} else {
			stream = int(binary.BigEndian.Uint16(h[2:4]))
		}
		if h[0] != 0x80|v || stream != 7 || h[hlen-5] != byte(primitive.OpCodeError) {
			t.Fatalf("v%d: answer header % x, want version %#x, stream 7, ERROR", v, h, 0x80|v)
		}
		body := make([]byte, binary.BigEndian.Uint32(h[hlen-4:]))
		if _, err := io.ReadFull(c.br, body); err != nil {
			t.Fatal(err)
		}
		wantMsg := "Invalid or unsupported protocol version (" + strconv.Itoa(int(v)) + "); the lowest supported version is 4 and the greatest is 4"
		if got := binary.BigEndian.Uint32(body); got != 0x000A || string(body[6:]) != wantMsg || int(binary.BigEndian.Uint16(body[4:])) != len(wantMsg) {
			t.Fatalf("v%d: answer body %q, want PROTOCOL_ERROR %q", v, body, wantMsg)
		}
		c.expectClosed()
	}
}
