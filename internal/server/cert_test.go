package server

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const testSecret = "a secret of at least sixteen bytes"

// clusterConfig is a node of a cluster with its API on addr and its data in dir.
func clusterConfig(dir, addr string) Config {
	return Config{DataDir: dir, CosmosAddr: addr, TLS: true, ClusterAddr: "127.0.0.1:7001",
		Join: []string{"127.0.0.1:7001"}, ClusterSecret: []byte(testSecret)}
}

// served is the certificate a TLS configuration serves.
func served(t *testing.T, c *tls.Config) *tls.Certificate {
	t.Helper()
	if c == nil {
		t.Fatal("no TLS configuration")
	}
	if len(c.Certificates) > 0 {
		return &c.Certificates[0]
	}
	cert, err := c.GetCertificate(&tls.ClientHelloInfo{})
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

func mustServerTLS(t *testing.T, cfg Config) *tls.Config {
	t.Helper()
	c, err := serverTLS(cfg, quiet)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// trustOnly is a pool of the certificates in the PEM file at path.
func trustOnly(t *testing.T, path string) *x509.CertPool {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(readFile(t, path)) {
		t.Fatalf("%s holds no certificate", path)
	}
	return pool
}

// handshake serves server over loopback and dials it as a client that trusts roots and asks
// for serverName, returning the client's error.
func handshake(t *testing.T, server *tls.Config, roots *x509.CertPool, serverName string) error {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		conn, err := l.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		tls.Server(conn, server).Handshake()
	}()
	conn, err := tls.Dial("tcp", l.Addr().String(), &tls.Config{RootCAs: roots, ServerName: serverName})
	if err != nil {
		return err
	}
	return conn.Close()
}

// One secret derives one authority, byte for byte, on every node; another secret another one,
// with another name (so that a client can trust both), and neither is nodetls's.
func TestClusterAuthorityIsDerived(t *testing.T) {
	a, err := deriveClusterAuthority([]byte(testSecret))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := deriveClusterAuthority([]byte(testSecret))
	if !bytes.Equal(a.der, b.der) {
		t.Fatal("one secret gave two different authority certificates")
	}
	other, _ := deriveClusterAuthority([]byte(testSecret + "!"))
	if bytes.Equal(a.key.D.Bytes(), other.key.D.Bytes()) || a.cert.Subject.CommonName == other.cert.Subject.CommonName ||
		a.cert.SerialNumber.Cmp(other.cert.SerialNumber) == 0 {
		t.Fatalf("two secrets, authorities alike: %s and %s", a.cert.Subject, other.cert.Subject)
	}
	if !a.cert.IsCA || !strings.HasPrefix(a.cert.Subject.CommonName, clusterAuthorityName) {
		t.Fatalf("authority certificate: CA %v, subject %s", a.cert.IsCA, a.cert.Subject)
	}
	if _, err := deriveClusterAuthority([]byte("fifteen bytes!!")); err == nil {
		t.Fatal("a 15-byte secret derived an authority")
	}
}

// Two nodes of a cluster, each on its own host, write the same tls-ca.pem, and a client that
// trusts either node's file verifies both nodes by the host it dials; a client of another
// cluster's file verifies neither.
func TestClusterNodesShareOneAuthority(t *testing.T) {
	d1, d2 := t.TempDir(), t.TempDir()
	n1 := mustServerTLS(t, clusterConfig(d1, "127.0.0.1:8081"))
	cfg2 := clusterConfig(d2, "node2.example:8082")
	cfg2.CQLAddr = "10.1.2.3:9042"
	n2 := mustServerTLS(t, cfg2)
	ca1, ca2 := readFile(t, filepath.Join(d1, CAFile)), readFile(t, filepath.Join(d2, CAFile))
	if !bytes.Equal(ca1, ca2) {
		t.Fatal("two nodes of one cluster wrote different tls-ca.pem")
	}
	roots := trustOnly(t, filepath.Join(d1, CAFile))
	for _, c := range []struct {
		node *tls.Config
		host string
	}{{n1, "127.0.0.1"}, {n1, "localhost"}, {n2, "node2.example"}, {n2, "10.1.2.3"}, {n2, "localhost"}, {n2, "::1"}} {
		if err := handshake(t, c.node, roots, c.host); err != nil {
			t.Errorf("dialling %s: %v", c.host, err)
		}
	}
	if err := handshake(t, n1, roots, "node2.example"); err == nil {
		t.Error("node 1's certificate names node 2's host")
	}
	if leaf := served(t, n2).Leaf; leaf.Subject.CommonName != "node2.example" {
		t.Errorf("node 2's certificate is named %q", leaf.Subject.CommonName)
	}
	// The node's own certificate file carries the authority too, for clients told to trust it.
	if err := handshake(t, n2, trustOnly(t, filepath.Join(d1, CertFile)), "node2.example"); err != nil {
		t.Errorf("trusting node 1's tls-cert.pem: %v", err)
	}

	d3 := t.TempDir()
	cfg3 := clusterConfig(d3, "127.0.0.1:8083")
	cfg3.ClusterSecret = []byte("another cluster's secret")
	mustServerTLS(t, cfg3)
	if err := handshake(t, n1, trustOnly(t, filepath.Join(d3, CAFile)), "127.0.0.1"); err == nil {
		t.Error("another cluster's authority verifies this cluster's node")
	}
}

// A node restarted keeps its certificate; restarted on another host it gets one for it.
func TestClusterCertificateKeptAndReissued(t *testing.T) {
	dir := t.TempDir()
	first := served(t, mustServerTLS(t, clusterConfig(dir, "127.0.0.1:8081")))
	again := served(t, mustServerTLS(t, clusterConfig(dir, "127.0.0.1:8081")))
	if !bytes.Equal(first.Certificate[0], again.Certificate[0]) {
		t.Fatal("a restart on the same hosts issued another certificate")
	}
	moved := served(t, mustServerTLS(t, clusterConfig(dir, "127.0.0.2:8081")))
	if bytes.Equal(first.Certificate[0], moved.Certificate[0]) || moved.Leaf.VerifyHostname("127.0.0.2") != nil {
		t.Fatal("a node on another host kept a certificate that does not name it")
	}
}

// A certificate near its end is renewed, at start and at a handshake.
func TestClusterCertificateRenewed(t *testing.T) {
	dir := t.TempDir()
	cfg := clusterConfig(dir, "127.0.0.1:8081")
	ca, _ := deriveClusterAuthority(cfg.ClusterSecret)
	iss := &nodeIssuer{dir: dir, ca: ca, hosts: certHosts(cfg), log: quiet}
	if err := iss.load(time.Now().Add(-leafLifetime + renewBefore/2)); err != nil { // issued long ago
		t.Fatal(err)
	}
	old := iss.cert
	if _, err := iss.get(nil); err != nil {
		t.Fatal(err)
	}
	if iss.cert == old || time.Until(iss.cert.Leaf.NotAfter) < leafLifetime-time.Hour {
		t.Fatal("a certificate near its end was not renewed at a handshake")
	}
	if err := iss.load(time.Now().Add(leafLifetime - renewBefore/2)); err != nil {
		t.Fatal(err)
	}
	if iss.cert.Leaf.NotAfter.Before(time.Now().Add(leafLifetime)) {
		t.Fatal("a certificate near its end was kept at start")
	}
}

// A data directory of the previous release, with its self-signed certificate, opens in a
// cluster and moves to the cluster authority's certificate.
func TestSelfSignedMovesToClusterAuthority(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := loadOrCreateCert(dir); err != nil { // as the previous release left it
		t.Fatal(err)
	}
	old := readFile(t, filepath.Join(dir, CertFile))
	c := mustServerTLS(t, clusterConfig(dir, "127.0.0.1:8081"))
	if bytes.Equal(old, readFile(t, filepath.Join(dir, CertFile))) {
		t.Fatal("the self-signed certificate was kept")
	}
	if err := handshake(t, c, trustOnly(t, filepath.Join(dir, CAFile)), "127.0.0.1"); err != nil {
		t.Fatal(err)
	}
}

// A node alone serves its self-signed certificate as before, and tls-ca.pem is that
// certificate.
func TestNodeAloneKeepsSelfSigned(t *testing.T) {
	dir := t.TempDir()
	c := mustServerTLS(t, Config{DataDir: dir, CosmosAddr: "127.0.0.1:8081", TLS: true})
	leaf := served(t, c).Leaf
	if leaf == nil || !leaf.IsCA || leaf.Subject.CommonName != "localhost" || leaf.CheckSignatureFrom(leaf) != nil {
		t.Fatalf("a node alone serves %v", leaf)
	}
	if !bytes.Equal(readFile(t, filepath.Join(dir, CertFile)), readFile(t, filepath.Join(dir, CAFile))) {
		t.Fatal("a node alone's tls-ca.pem is not its certificate")
	}
	if c, err := serverTLS(Config{DataDir: t.TempDir(), CosmosAddr: "127.0.0.1:8081"}, quiet); c != nil || err != nil {
		t.Fatalf("--tls=false: %v, %v", c, err)
	}
}

// testCA is an operator's authority and a certificate it issued for 127.0.0.1, as files.
func testCA(t *testing.T, dir string) (caPath, certPath, keyPath string) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "operator CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(8), Subject: pkix.Name{CommonName: "db.example"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalPKCS8PrivateKey(key)
	caPath, certPath, keyPath = filepath.Join(dir, "ca.pem"), filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	for path, b := range map[string]*pem.Block{caPath: {Type: "CERTIFICATE", Bytes: caDER},
		certPath: {Type: "CERTIFICATE", Bytes: der}, keyPath: {Type: "PRIVATE KEY", Bytes: keyDER}} {
		if err := os.WriteFile(path, pem.EncodeToMemory(b), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return caPath, certPath, keyPath
}

// --tls-cert, --tls-key and --tls-ca are served as given, in a cluster too, and the authority
// is copied to tls-ca.pem; an authority that did not issue the certificate is refused.
func TestOperatorCertificate(t *testing.T) {
	caPath, certPath, keyPath := testCA(t, t.TempDir())
	dir := t.TempDir()
	cfg := clusterConfig(dir, "127.0.0.1:8081")
	mustServerTLS(t, cfg) // the derived authority's tls-ca.pem, which the operator's replaces
	cfg.TLSCert, cfg.TLSKey, cfg.TLSCA = certPath, keyPath, caPath
	c := mustServerTLS(t, cfg)
	if !bytes.Equal(readFile(t, caPath), readFile(t, filepath.Join(dir, CAFile))) {
		t.Fatal("tls-ca.pem is not the --tls-ca file")
	}
	if err := handshake(t, c, trustOnly(t, filepath.Join(dir, CAFile)), "127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	// Without --tls-ca, no tls-ca.pem that fails to verify it stays.
	other := t.TempDir()
	cfgOther := clusterConfig(other, "127.0.0.1:8081")
	mustServerTLS(t, cfgOther)
	cfgOther.TLSCert, cfgOther.TLSKey = certPath, keyPath
	mustServerTLS(t, cfgOther)
	if _, err := os.Stat(filepath.Join(other, CAFile)); !os.IsNotExist(err) {
		t.Fatalf("a tls-ca.pem that does not verify the served certificate stayed: %v", err)
	}

	wrongCA, _, _ := testCA(t, t.TempDir())
	cfg.TLSCA = wrongCA
	if _, err := serverTLS(cfg, quiet); err == nil || !strings.Contains(err.Error(), "not issued by") {
		t.Fatalf("a --tls-ca that did not issue --tls-cert: %v", err)
	}
	for _, bad := range []Config{
		{DataDir: dir, TLS: true, TLSCert: certPath},
		{DataDir: dir, TLS: true, TLSCA: caPath},
		{DataDir: dir, TLSCert: certPath, TLSKey: keyPath},
	} {
		if _, err := serverTLS(bad, quiet); err == nil {
			t.Errorf("accepted %+v", bad)
		}
	}
}

// An operator's own certificate put in the data directory (as docs/running.md allows) is
// served in a cluster as it is, not replaced.
func TestOperatorCertificateInDataDirKept(t *testing.T) {
	dir := t.TempDir()
	_, certPath, keyPath := testCA(t, t.TempDir())
	for src, dst := range map[string]string{certPath: CertFile, keyPath: keyFile} {
		if err := os.WriteFile(filepath.Join(dir, dst), readFile(t, src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	c := mustServerTLS(t, clusterConfig(dir, "127.0.0.1:8081"))
	if served(t, c).Leaf.Subject.CommonName != "db.example" {
		t.Fatal("the operator's certificate in the data directory was replaced")
	}
	if !bytes.Equal(readFile(t, certPath), readFile(t, filepath.Join(dir, CertFile))) {
		t.Fatal("the operator's tls-cert.pem was rewritten")
	}
}
