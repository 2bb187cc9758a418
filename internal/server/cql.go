package server

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net"

	apicql "github.com/partita-db/partita/internal/api/cql"
	"github.com/partita-db/partita/internal/cqlexec"
	"github.com/partita-db/partita/internal/engine"
)

// AccountName is the username CQL drivers sign in with (the password being the account key,
// as for Azure Cosmos DB's Cassandra API): the account id the Cosmos API's GET / answers
// (internal/api/cosmos/account.go).
const AccountName = "partita"

// cqlFrontend serves the Cassandra API (CQL native protocol v4), over TLS with the Cosmos
// API's certificate when TLS is on.
type cqlFrontend struct {
	srv *apicql.Server
	tls *tls.Config
}

func newCQLFrontend(cfg Config, eng *engine.Engine, log *slog.Logger) (*cqlFrontend, error) {
	exec := cqlexec.New(eng, log)
	o := apicql.Options{Username: AccountName, Key: cfg.Key, ReadOnlyKey: cfg.ReadOnlyKey, Logger: log}
	if cfg.ClusterAddr != "" {
		o.Peers = exec.Peers // TOPOLOGY_CHANGE and STATUS_CHANGE events
	}
	f := &cqlFrontend{srv: apicql.New(exec, o)}
	// The Cosmos front end's certificate (cert.go), which it made first; nil with --tls=false.
	tlsConf, err := serverTLS(cfg, log)
	if err != nil {
		return nil, err
	}
	f.tls = tlsConf
	return f, nil
}

func (f *cqlFrontend) name() string { return "cql" }

// endpoint is the contact point a driver is configured with.
func (f *cqlFrontend) endpoint(addr net.Addr) slog.Attr { return slog.String("cql", addr.String()) }

func (f *cqlFrontend) serve(ln net.Listener) error {
	if f.tls != nil {
		ln = tls.NewListener(ln, f.tls)
	}
	return f.srv.Serve(ln)
}

func (f *cqlFrontend) shutdown(ctx context.Context) error { return f.srv.Shutdown(ctx) }
