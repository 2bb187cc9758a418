package nodetls

import (
	"crypto/ed25519"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// MinSecretLen is the shortest secret New accepts: 16 bytes, as many as a random 128-bit key.
const MinSecretLen = 16

// ErrShortSecret is what New returns for a secret shorter than MinSecretLen.
var ErrShortSecret = fmt.Errorf("nodetls: the cluster secret must be at least %d bytes", MinSecretLen)

// serverName is the name every node's certificate carries and every node asks for: the
// secret, not the name, tells nodes apart from strangers, and addresses change.
const serverName = "partita-node"

// Identity is a node's TLS identity in its cluster: the authority the secret derives and a
// certificate that authority issued to this node.
type Identity struct {
	authority *x509.CertPool
	// caFingerprint names the authority (its certificate's SHA-256), the same on every node
	// that holds the secret.
	caFingerprint [32]byte
	cert          tls.Certificate
	// caDER and keyDER are the authority's certificate and the node's key, for WriteFiles.
	caDER, keyDER []byte
}

// New derives the cluster's authority from secret and issues this node a certificate. hosts
// are the names and IP addresses the node is reached at, which its certificate names beside
// the name every node answers to (for clients that check the host they dialled, as etcd's do).
func New(secret []byte, hosts ...string) (*Identity, error) {
	if len(secret) < MinSecretLen {
		return nil, ErrShortSecret
	}
	seed, err := hkdf.Key(sha256.New, secret, []byte("partita"), "partita cluster authority v1", ed25519.SeedSize)
	if err != nil {
		return nil, err
	}
	caKey := ed25519.NewKeyFromSeed(seed)
	// Fixed fields and a deterministic signature: the same certificate on every node.
	caTemplate := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "partita cluster authority"},
		NotBefore:             time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		NotAfter:              time.Date(2226, 1, 1, 0, 0, 0, 0, time.UTC),
		IsCA:                  true,
		BasicConstraintsValid: true,
		MaxPathLenZero:        true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(nil, caTemplate, caTemplate, caKey.Public(), caKey)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}

	pub, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, err
	}
	now := time.Now()
	nodeTemplate := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: serverName},
		DNSNames:     []string{serverName},
		// A little earlier than now, for peers whose clocks run behind; the certificate lives
		// as long as the process, which makes a new one at every start.
		NotBefore:   now.Add(-24 * time.Hour),
		NotAfter:    now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			nodeTemplate.IPAddresses = append(nodeTemplate.IPAddresses, ip)
		} else if h != "" {
			nodeTemplate.DNSNames = append(nodeTemplate.DNSNames, h)
		}
	}
	nodeDER, err := x509.CreateCertificate(rand.Reader, nodeTemplate, ca, pub, caKey)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return &Identity{
		caDER:         caDER,
		keyDER:        keyDER,
		authority:     pool,
		caFingerprint: sha256.Sum256(caDER),
		cert:          tls.Certificate{Certificate: [][]byte{nodeDER, caDER}, PrivateKey: key},
	}, nil
}

// Server is the TLS configuration a node accepts peers with: only peers whose certificate
// the cluster's authority issued.
func (id *Identity) Server() *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{id.cert},
		ClientCAs:    id.authority,
		ClientAuth:   tls.RequireAndVerifyClientCert,
	}
}

// Client is the TLS configuration a node reaches peers with: it shows its certificate and
// accepts only a peer whose certificate the cluster's authority issued.
func (id *Identity) Client() *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{id.cert},
		RootCAs:      id.authority,
		ServerName:   serverName,
	}
}

// Authority names the cluster's authority: equal on two nodes exactly when they hold the
// same secret (for logs and status, never the secret itself).
func (id *Identity) Authority() string { return fmt.Sprintf("%x", id.caFingerprint[:8]) }

// Files are the paths WriteFiles wrote: PEM files for a program that takes TLS as files (the
// embedded etcd).
type Files struct {
	Authority, Cert, Key string
}

// WriteFiles writes the authority's certificate, the node's certificate and its key to dir
// (created if needed; the key readable by the owner only), replacing what is there.
func (id *Identity) WriteFiles(dir string) (Files, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Files{}, err
	}
	f := Files{Authority: filepath.Join(dir, "authority.pem"), Cert: filepath.Join(dir, "node.pem"),
		Key: filepath.Join(dir, "node-key.pem")}
	for _, w := range []struct {
		path  string
		block *pem.Block
		mode  os.FileMode
	}{
		{f.Authority, &pem.Block{Type: "CERTIFICATE", Bytes: id.caDER}, 0o644},
		{f.Cert, &pem.Block{Type: "CERTIFICATE", Bytes: id.cert.Certificate[0]}, 0o644},
		{f.Key, &pem.Block{Type: "PRIVATE KEY", Bytes: id.keyDER}, 0o600},
	} {
		if err := os.WriteFile(w.path, pem.EncodeToMemory(w.block), w.mode); err != nil {
			return Files{}, err
		}
	}
	return f, nil
}
