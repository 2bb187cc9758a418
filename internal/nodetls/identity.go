package nodetls

import (
	"crypto/ed25519"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
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
}

// New derives the cluster's authority from secret and issues this node a certificate.
func New(secret []byte) (*Identity, error) {
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
	nodeDER, err := x509.CreateCertificate(rand.Reader, nodeTemplate, ca, pub, caKey)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return &Identity{
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
