package nodetls

import (
	"crypto/tls"
	"errors"
	"net"
	"testing"
)

// handshake runs a TLS handshake between a server and a client over loopback TCP (whose
// buffers let each side finish writing what it has to say) and returns each side's error.
func handshake(t *testing.T, server, client *tls.Config) (serr, cerr error) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	done := make(chan error, 1)
	go func() {
		conn, err := l.Accept()
		if err != nil {
			done <- err
			return
		}
		defer conn.Close()
		s := tls.Server(conn, server)
		err = s.Handshake()
		if err == nil {
			_, err = s.Write([]byte{1}) // a byte the client reads only if it was accepted
		}
		done <- err
	}()
	conn, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := tls.Client(conn, client)
	cerr = c.Handshake()
	if cerr == nil {
		// In TLS 1.3 the client is done before the server checked its certificate: a refusal
		// arrives as an alert on the first read.
		_, cerr = c.Read(make([]byte, 1))
	}
	return <-done, cerr
}

func identity(t *testing.T, secret string) *Identity {
	t.Helper()
	id, err := New([]byte(secret))
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// Two nodes given the same secret accept each other; each made its own certificate.
func TestSameSecretAccepted(t *testing.T) {
	a, b := identity(t, "correct horse battery staple"), identity(t, "correct horse battery staple")
	if a.Authority() != b.Authority() {
		t.Fatalf("one secret, two authorities: %s and %s", a.Authority(), b.Authority())
	}
	if string(a.cert.Certificate[0]) == string(b.cert.Certificate[0]) {
		t.Fatal("two nodes share one certificate")
	}
	if serr, cerr := handshake(t, a.Server(), b.Client()); serr != nil || cerr != nil {
		t.Fatalf("server: %v, client: %v", serr, cerr)
	}
	if serr, cerr := handshake(t, b.Server(), a.Client()); serr != nil || cerr != nil {
		t.Fatalf("server: %v, client: %v", serr, cerr)
	}
}

// A process with another secret is refused as a client, and refuses the cluster's servers;
// one with no certificate at all is refused too.
func TestOtherSecretRefused(t *testing.T) {
	node, stranger := identity(t, "correct horse battery staple"), identity(t, "correct horse battery stapler")
	if node.Authority() == stranger.Authority() {
		t.Fatal("two secrets, one authority")
	}
	if serr, _ := handshake(t, node.Server(), stranger.Client()); serr == nil {
		t.Fatal("a node accepted a client from another cluster")
	}
	if _, cerr := handshake(t, stranger.Server(), node.Client()); cerr == nil {
		t.Fatal("a node accepted a server from another cluster")
	}
	anonymous := &tls.Config{MinVersion: tls.VersionTLS13, InsecureSkipVerify: true}
	if serr, _ := handshake(t, node.Server(), anonymous); serr == nil {
		t.Fatal("a node accepted a client without a certificate")
	}
}

func TestShortSecret(t *testing.T) {
	if _, err := New([]byte("fifteen bytes!!")); !errors.Is(err, ErrShortSecret) {
		t.Fatalf("a 15-byte secret: %v", err)
	}
}
