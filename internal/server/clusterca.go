package server

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"time"

	"github.com/partita-db/partita/internal/nodetls"
)

// clusterAuthorityInfo is the HKDF info the client-facing authority's key is derived with. It
// differs from internal/nodetls's, so that the authority clients trust is not the one that
// admits a process as a node: a leaf it issues opens no node-to-node port, and a client's
// trust file (copied to laptops, CI, containers) is worth nothing against the cluster's peers.
const clusterAuthorityInfo = "partita client authority v1"

// clusterAuthorityName begins the common name of every client-facing authority a secret
// derives; what follows it tells one cluster's from another's (see deriveClusterAuthority).
const clusterAuthorityName = "Partita cluster authority "

// leafLifetime is how long a certificate issued to a node is valid, and renewBefore how long
// before its end the node issues itself a new one. 397 days is the longest that every client
// accepts for a server certificate (Apple's platforms refuse longer ones).
const (
	leafLifetime = 397 * 24 * time.Hour
	renewBefore  = 30 * 24 * time.Hour
)

// clusterAuthority is the authority that issues the client-facing certificates of a cluster's
// nodes. Every node derives it from the cluster secret, so all of them issue under one root
// without a file being copied between them, and clients trust one file, DATA/tls-ca.pem.
//
// It is ECDSA P-256 where internal/nodetls's is Ed25519: browsers (the explorer) and several
// TLS stacks accept no Ed25519 certificates.
type clusterAuthority struct {
	key  *ecdsa.PrivateKey
	cert *x509.Certificate
	der  []byte
}

// deriveClusterAuthority derives the cluster's client-facing authority from its secret. The
// same secret gives byte-identical certificates on every node: the key comes from HKDF, the
// fields are fixed, and the signature is RFC 6979's deterministic one.
func deriveClusterAuthority(secret []byte) (*clusterAuthority, error) {
	if len(secret) < nodetls.MinSecretLen {
		return nil, nodetls.ErrShortSecret
	}
	// 48 bytes reduced modulo n-1, plus one: a scalar in [1, n-1] whose bias is negligible
	// (FIPS 186-5 A.2.1). ecdsa.GenerateKey cannot be made deterministic: it ignores its reader.
	seed, err := hkdf.Key(sha256.New, secret, []byte("partita"), clusterAuthorityInfo, 48)
	if err != nil {
		return nil, err
	}
	n := elliptic.P256().Params().N
	d := new(big.Int).SetBytes(seed)
	d.Mod(d, new(big.Int).Sub(n, big.NewInt(1)))
	d.Add(d, big.NewInt(1))
	key, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), d.FillBytes(make([]byte, 32)))
	if err != nil {
		return nil, fmt.Errorf("deriving the cluster's TLS authority: %w", err)
	}
	pub, err := key.PublicKey.Bytes()
	if err != nil {
		return nil, err
	}
	id := sha256.Sum256(pub)
	tmpl := &x509.Certificate{
		// The serial and the name carry the key's fingerprint: two clusters' authorities differ
		// in subject and serial, so a client can trust both at once (OpenSSL, under Node's
		// NODE_EXTRA_CA_CERTS, keeps one certificate per subject; Firefox refuses two with one
		// issuer and serial).
		SerialNumber:          new(big.Int).SetBytes(id[:16]),
		Subject:               pkix.Name{Organization: []string{"Partita"}, CommonName: fmt.Sprintf("%s%x", clusterAuthorityName, id[:6])},
		NotBefore:             time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
		NotAfter:              time.Date(2125, 1, 1, 0, 0, 0, 0, time.UTC),
		IsCA:                  true,
		BasicConstraintsValid: true,
		MaxPathLenZero:        true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	// A nil reader makes ECDSA sign deterministically (RFC 6979); the serial is given, so
	// nothing else is drawn at random.
	der, err := x509.CreateCertificate(nil, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &clusterAuthority{key: key, cert: cert, der: der}, nil
}

// issued reports whether leaf was issued by a. It checks the signature only: a leaf that has
// expired or names other hosts was still issued by it.
func (a *clusterAuthority) issued(leaf *x509.Certificate) bool {
	return leaf.CheckSignatureFrom(a.cert) == nil
}

// issue makes a node a certificate for hosts (names and IP addresses), with a key of its
// own, valid from an hour before now (for clients whose clocks run behind) for leafLifetime.
// The chain it returns carries the authority after the leaf, so that a client given the
// node's certificate file (tls-cert.pem, as the docs of a node alone say) trusts the
// authority too.
func (a *clusterAuthority) issue(hosts []string, now time.Time) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		// Clients go by the names below; the common name is for people reading the certificate.
		Subject:     pkix.Name{Organization: []string{"Partita"}, CommonName: commonName(hosts)},
		NotBefore:   now.Add(-time.Hour),
		NotAfter:    now.Add(leafLifetime),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, &key.PublicKey, a.key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("issuing this node's TLS certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der, a.der}, PrivateKey: key, Leaf: leaf}, nil
}

// commonName is the first of hosts (the node's API host, as certHosts orders them), cut to
// the 64 bytes X.509 allows a common name.
func commonName(hosts []string) string {
	if len(hosts) == 0 {
		return "partita node"
	}
	return hosts[0][:min(len(hosts[0]), 64)]
}
