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
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Certificate files in the data directory. Clients that must trust the server (the Go SDK,
// Node with NODE_EXTRA_CA_CERTS, curl --cacert) are pointed at CAFile: in a cluster it is the
// one authority that issued every node's certificate; on a node alone, its self-signed
// certificate, the same as CertFile, which older instructions name.
const (
	CertFile = "tls-cert.pem"
	keyFile  = "tls-key.pem"
	CAFile   = "tls-ca.pem"
)

// serverTLS is the TLS configuration both APIs serve with (nil with --tls=false). Each front
// end calls it; the first to run makes what is missing, the second finds it made. The
// certificate is, in this order:
//
//   - the operator's, given with --tls-cert and --tls-key (and its authority with --tls-ca),
//     served as given;
//   - in a cluster, one issued by the authority every node derives from the cluster secret
//     (clusterca.go), kept in tls-cert.pem and tls-key.pem, unless those hold a certificate
//     Partita did not make, which an operator put there and which is served as it is;
//   - on a node alone, the self-signed one of loadOrCreateCert, exactly as before.
//
// tls-ca.pem is written whenever the node knows the authority of what it serves, and removed
// when it does not and the file there would not verify it, so that it never misleads.
func serverTLS(cfg Config, log *slog.Logger) (*tls.Config, error) {
	if err := checkTLSFlags(cfg); err != nil {
		return nil, err
	}
	switch {
	case !cfg.TLS:
		return nil, nil
	case cfg.TLSCert != "":
		return operatorTLS(cfg, log)
	case cfg.ClusterAddr != "":
		return clusterTLS(cfg, log)
	}
	cert, created, err := loadOrCreateCert(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	if created {
		log.Info("created a self-signed TLS certificate", "file", filepath.Join(cfg.DataDir, CertFile))
	}
	if leaf, err := x509.ParseCertificate(cert.Certificate[0]); err == nil && leaf.IsCA && leaf.CheckSignatureFrom(leaf) == nil {
		// Self-signed: the certificate is its own authority.
		if err := writeIfChanged(filepath.Join(cfg.DataDir, CAFile), pemCerts(cert.Certificate[:1]), 0o644); err != nil {
			return nil, err
		}
	} else if err := forgetStaleCA(cfg.DataDir, cert, log); err != nil {
		return nil, err
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// checkTLSFlags checks that the certificate flags come as they must.
func checkTLSFlags(cfg Config) error {
	given := cfg.TLSCert != "" || cfg.TLSKey != "" || cfg.TLSCA != ""
	switch {
	case given && !cfg.TLS:
		return errors.New("--tls-cert, --tls-key and --tls-ca are for --tls; --tls=false serves no certificate")
	case (cfg.TLSCert == "") != (cfg.TLSKey == ""):
		return errors.New("--tls-cert and --tls-key go together: the certificate to serve (PEM, the node's first, then any intermediates) and its private key")
	case cfg.TLSCA != "" && cfg.TLSCert == "":
		return errors.New("--tls-ca needs --tls-cert and --tls-key: it names the authority that issued them (without them the node makes its own certificate)")
	}
	return nil
}

// operatorTLS serves the certificate and key the operator gave. With --tls-ca, the node checks
// that the authority issued the certificate (a mismatch would fail every client) and copies it
// to tls-ca.pem for clients.
func operatorTLS(cfg Config, log *slog.Logger) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(cfg.TLSCert, cfg.TLSKey)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert %s, --tls-key %s: %w", cfg.TLSCert, cfg.TLSKey, err)
	}
	if cfg.TLSCA == "" {
		if err := forgetStaleCA(cfg.DataDir, cert, log); err != nil {
			return nil, err
		}
	} else {
		data, err := os.ReadFile(cfg.TLSCA)
		if err != nil {
			return nil, fmt.Errorf("--tls-ca: %w", err)
		}
		roots, ders := parsePEMCerts(data)
		if len(ders) == 0 {
			return nil, fmt.Errorf("--tls-ca %s holds no PEM certificate", cfg.TLSCA)
		}
		if err := verifyChain(cert, roots); err != nil {
			return nil, fmt.Errorf("--tls-cert %s was not issued by an authority of --tls-ca %s: %w", cfg.TLSCert, cfg.TLSCA, err)
		}
		if err := writeIfChanged(filepath.Join(cfg.DataDir, CAFile), pemCerts(ders), 0o644); err != nil {
			return nil, err
		}
	}
	if time.Now().After(cert.Leaf.NotAfter) {
		log.Warn("the TLS certificate of --tls-cert has expired: clients will refuse it", "file", cfg.TLSCert, "expired", cert.Leaf.NotAfter)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// clusterTLS serves a certificate issued by the cluster's authority for this node's hosts,
// which it keeps in tls-cert.pem and tls-key.pem (with the authority after the leaf) and
// reissues when the hosts change or its end nears. A self-signed certificate left there by a
// release before the cluster authority, or one issued under another secret, is replaced; a
// certificate Partita did not make is the operator's and is served as it is.
func clusterTLS(cfg Config, log *slog.Logger) (*tls.Config, error) {
	ca, err := deriveClusterAuthority(cfg.ClusterSecret)
	if err != nil {
		return nil, err
	}
	certPath := filepath.Join(cfg.DataDir, CertFile)
	if data, err := os.ReadFile(certPath); err == nil {
		_, ders := parsePEMCerts(data)
		var leaf *x509.Certificate
		if len(ders) > 0 {
			leaf, _ = x509.ParseCertificate(ders[0])
		}
		if leaf == nil {
			return nil, fmt.Errorf("loading TLS certificate from %s: %s holds no PEM certificate", cfg.DataDir, certPath)
		}
		if !partitaMade(leaf, ca) {
			cert, err := tls.LoadX509KeyPair(certPath, filepath.Join(cfg.DataDir, keyFile))
			if err != nil {
				return nil, fmt.Errorf("loading TLS certificate from %s: %w", cfg.DataDir, err)
			}
			log.Info("serving the operator's TLS certificate in the data directory, which the cluster's authority did not issue", "file", certPath)
			if err := forgetStaleCA(cfg.DataDir, cert, log); err != nil {
				return nil, err
			}
			return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
		}
		if !ca.issued(leaf) {
			log.Info("replacing the TLS certificate in the data directory, which the cluster's authority did not issue (a node alone's self-signed one, or another secret's authority's)", "file", certPath)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("loading TLS certificate from %s: %w", cfg.DataDir, err)
	}
	if err := writeIfChanged(filepath.Join(cfg.DataDir, CAFile), pemCerts([][]byte{ca.der}), 0o644); err != nil {
		return nil, err
	}
	iss := &nodeIssuer{dir: cfg.DataDir, ca: ca, hosts: certHosts(cfg), log: log}
	if err := iss.load(time.Now()); err != nil {
		return nil, err
	}
	return &tls.Config{GetCertificate: iss.get, MinVersion: tls.VersionTLS12}, nil
}

// partitaMade reports whether leaf is a certificate Partita made and may replace: one the
// cluster's authority issued, one an authority of another secret issued (the secret was
// changed), or the self-signed one of a node alone (loadOrCreateCert), which a node of a
// cluster served before the cluster had an authority.
func partitaMade(leaf *x509.Certificate, ca *clusterAuthority) bool {
	if ca.issued(leaf) || strings.HasPrefix(leaf.Issuer.CommonName, clusterAuthorityName) {
		return true
	}
	return slices.Equal(leaf.Subject.Organization, []string{"Partita"}) && leaf.Subject.CommonName == "localhost" &&
		leaf.CheckSignatureFrom(leaf) == nil
}

// nodeIssuer keeps a node's certificate from the cluster's authority current: at start and, as
// the node runs for months, at a handshake once the certificate nears its end.
type nodeIssuer struct {
	dir   string
	ca    *clusterAuthority
	hosts []string
	log   *slog.Logger

	mu   sync.Mutex
	cert *tls.Certificate
}

// load takes the certificate in the data directory if it is still good for this node, or
// issues and writes a new one.
func (iss *nodeIssuer) load(now time.Time) error {
	cert, err := tls.LoadX509KeyPair(filepath.Join(iss.dir, CertFile), filepath.Join(iss.dir, keyFile))
	if err == nil && iss.good(cert.Leaf, now) {
		iss.cert = &cert
		return nil
	}
	// Missing, not the authority's, naming other hosts, near its end, or with a key that does
	// not match it (a crash between writing the two files): issue another.
	return iss.renew(now)
}

// good reports whether leaf was issued by the authority, names every host and is not near
// its end.
func (iss *nodeIssuer) good(leaf *x509.Certificate, now time.Time) bool {
	if !iss.ca.issued(leaf) || now.Before(leaf.NotBefore) || now.After(leaf.NotAfter.Add(-renewBefore)) {
		return false
	}
	for _, h := range iss.hosts {
		if leaf.VerifyHostname(h) != nil {
			return false
		}
	}
	return true
}

// renew issues a certificate and writes it, the key first: a crash between the two writes
// leaves a pair that does not match, which load replaces.
func (iss *nodeIssuer) renew(now time.Time) error {
	cert, err := iss.ca.issue(iss.hosts, now)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(iss.dir, keyFile), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(iss.dir, CertFile), pemCerts(cert.Certificate), 0o644); err != nil {
		return err
	}
	iss.cert = &cert
	iss.log.Info("issued this node's TLS certificate from the cluster's authority", "file", filepath.Join(iss.dir, CertFile),
		"authority", filepath.Join(iss.dir, CAFile), "hosts", strings.Join(iss.hosts, ","), "until", cert.Leaf.NotAfter.Format(time.DateOnly))
	return nil
}

// get is the listener's GetCertificate: the current certificate, renewed first when its end
// nears. A renewal that fails keeps the old one, which is still valid for renewBefore.
func (iss *nodeIssuer) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	if now := time.Now(); now.After(iss.cert.Leaf.NotAfter.Add(-renewBefore)) {
		if err := iss.renew(now); err != nil {
			iss.log.Warn("renewing this node's TLS certificate", "err", err)
		}
	}
	return iss.cert, nil
}

// certHosts are the names a node's certificate must carry: the hosts of its API and CQL
// listen addresses (first, the API's), and localhost. A listener on every interface (an empty
// host, 0.0.0.0 or ::) may be reached by the machine's name or any of its addresses.
func certHosts(cfg Config) []string {
	var hosts []string
	add := func(h string) {
		if i := strings.IndexByte(h, '%'); i >= 0 { // an IPv6 zone names no host
			h = h[:i]
		}
		if h != "" && !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	every := false
	for _, addr := range []string{cfg.CosmosAddr, cfg.CQLAddr} {
		h, _, err := net.SplitHostPort(addr)
		if err != nil {
			continue
		}
		if ip := net.ParseIP(h); h == "" || (ip != nil && ip.IsUnspecified()) {
			every = true
			continue
		}
		add(h)
	}
	add("localhost")
	add("127.0.0.1")
	add("::1")
	if every {
		if name, err := os.Hostname(); err == nil {
			add(name)
		}
		if addrs, err := net.InterfaceAddrs(); err == nil {
			for _, a := range addrs {
				if ipn, ok := a.(*net.IPNet); ok && ipn.IP.IsGlobalUnicast() {
					add(ipn.IP.String())
				}
			}
		}
	}
	return hosts
}

// forgetStaleCA removes tls-ca.pem when the node does not know the authority of the
// certificate it serves and the file would not verify it: left from another configuration,
// it would send clients to trust something that fails.
func forgetStaleCA(dir string, cert tls.Certificate, log *slog.Logger) error {
	path := filepath.Join(dir, CAFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	if roots, ders := parsePEMCerts(data); len(ders) > 0 && verifyChain(cert, roots) == nil {
		return nil
	}
	if err := os.Remove(path); err != nil {
		return err
	}
	log.Info("removed the TLS authority file, which does not verify the certificate this node serves; give the authority with --tls-ca", "file", path)
	return nil
}

// verifyChain checks that roots issued cert's chain, at a moment inside the leaf's validity:
// whether the certificate was issued by them, not whether it is still valid.
func verifyChain(cert tls.Certificate, roots *x509.CertPool) error {
	leaf := cert.Leaf
	if leaf == nil {
		var err error
		if leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
			return err
		}
	}
	inter := x509.NewCertPool()
	for _, der := range cert.Certificate[1:] {
		if c, err := x509.ParseCertificate(der); err == nil {
			inter.AddCert(c)
		}
	}
	_, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter,
		CurrentTime: leaf.NotBefore.Add(leaf.NotAfter.Sub(leaf.NotBefore) / 2), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
	return err
}

// parsePEMCerts returns the certificates of PEM data, as a pool and as DER.
func parsePEMCerts(data []byte) (*x509.CertPool, [][]byte) {
	pool := x509.NewCertPool()
	var ders [][]byte
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return pool, ders
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		if c, err := x509.ParseCertificate(b.Bytes); err == nil {
			pool.AddCert(c)
			ders = append(ders, b.Bytes)
		}
	}
}

// pemCerts encodes certificates as PEM, one after the other.
func pemCerts(ders [][]byte) []byte {
	var out []byte
	for _, der := range ders {
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	}
	return out
}

// writeIfChanged writes data to path unless the file holds it already (tls-ca.pem is the same
// at every start: rewriting it would only change its time).
func writeIfChanged(path string, data []byte, mode os.FileMode) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return nil
	}
	return writeFileAtomic(path, data, mode)
}

// writeFileAtomic replaces path with data through a temporary file and a rename, so that a
// crash leaves the old file or the new one, never a torn one that would stop the next start.
func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // after a successful rename, nothing is there any more
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// loadOrCreateCert returns the data directory's certificate, creating a self-signed one for
// localhost and 127.0.0.1 on first start.
func loadOrCreateCert(dir string) (tls.Certificate, bool, error) {
	certPath, keyPath := filepath.Join(dir, CertFile), filepath.Join(dir, keyFile)
	cert, err := tls.LoadX509KeyPair(certPath, keyPath)
	if err == nil {
		return cert, false, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return tls.Certificate{}, false, fmt.Errorf("loading TLS certificate from %s: %w", dir, err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, false, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return tls.Certificate{}, false, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "localhost", Organization: []string{"Partita"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().AddDate(5, 0, 0),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true, // self-signed: trusting it as a CA is how clients accept it
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1"), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, false, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return tls.Certificate{}, false, err
	}
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return tls.Certificate{}, false, err
	}
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return tls.Certificate{}, false, err
	}
	cert, err = tls.LoadX509KeyPair(certPath, keyPath)
	return cert, true, err
}
