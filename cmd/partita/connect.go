package main

import (
	"crypto/x509"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/partita-db/partita/internal/client"
	"github.com/partita-db/partita/internal/server"
)

// connFlags are the flags every tool that talks to a server shares (as `partita partitions`
// has them): where the server is, its key, and how to trust its certificate: the authority
// in a file (a node's DATA/tls-ca.pem, which serves every node of a cluster), or not at all.
type connFlags struct {
	endpoint, key, caFile string
	insecure              bool
}

func (c *connFlags) add(f *pflag.FlagSet) {
	f.StringVar(&c.endpoint, "endpoint", "https://127.0.0.1:8081/", "the server's endpoint")
	f.StringVar(&c.key, "key", server.EmulatorKey, "account key (base64)")
	f.StringVar(&c.caFile, "ca-file", "", "PEM file of the authority to trust the server's TLS certificate by, instead of the system's: a node's DATA/"+server.CAFile+" (in a cluster, any node's serves every node)")
	f.BoolVar(&c.insecure, "insecure", false, "do not verify the server's TLS certificate (overrides --ca-file)")
}

func (c *connFlags) client(opts client.Options) (*client.Client, error) {
	opts.Key, opts.Insecure = c.key, c.insecure
	// --insecure wins: a shell that exports PARTITA_CA_FILE may still pass it once.
	if c.caFile != "" && !c.insecure {
		pem, err := os.ReadFile(c.caFile)
		if err != nil {
			return nil, fmt.Errorf("--ca-file: %w", err)
		}
		opts.RootCAs = x509.NewCertPool()
		if !opts.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--ca-file %s holds no PEM certificate", c.caFile)
		}
	}
	return client.New(c.endpoint, opts)
}

// isTerminal reports whether f is an *os.File on a terminal (not a pipe, a file or a test's
// buffer).
func isTerminal(f any) bool {
	file, ok := f.(*os.File)
	return ok && term.IsTerminal(int(file.Fd()))
}

// humanCount writes n with thousands separators: 1234567 -> 1,234,567.
func humanCount(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// elapsed formats a duration for summaries: 850ms, 12.3s, 4m05s.
func elapsed(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}
