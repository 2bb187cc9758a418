package raftrpc

import (
	"context"
	"net"
	"strconv"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	grpcpeer "google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// Every stream and call carries, in this header, the newest cluster version the sending
// node's release knows (Config.Version; package clusterversion). A receiver asks
// Config.Admit whether it takes a sender of that version: once the cluster's active version
// is past what a node's release knows, that node would not understand what its peers now send,
// and they refuse it. Releases before versions send no header: they are at 0, the base.
const versionHeader = "partita-cluster-version"

// nodeHeader names the sending node (its id in hex, as cluster status shows it), for the
// receiver's log.
const nodeHeader = "partita-node"

// refusalLogEvery bounds how often a refused peer is logged: it tries again every fraction
// of a second.
const refusalLogEvery = 30 * time.Second

// headers are what every stream and call carries.
func (t *Transport) headers() []string {
	return []string{versionHeader, strconv.FormatUint(uint64(t.cfg.Version), 10), nodeHeader, strconv.FormatUint(uint64(t.cfg.Node), 16)}
}

// versioned makes a connection's every stream and call carry the header.
func (t *Transport) versioned() grpc.DialOption {
	kv := t.headers()
	return grpc.WithChainStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, stream grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		return stream(metadata.AppendToOutgoingContext(ctx, kv...), desc, cc, method, opts...)
	})
}

// versionedCalls is versioned for calls.
func (t *Transport) versionedCalls() grpc.DialOption {
	kv := t.headers()
	return grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoke grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		return invoke(metadata.AppendToOutgoingContext(ctx, kv...), method, req, reply, cc, opts...)
	})
}

// admitting makes the server ask Config.Admit about every stream and call.
func (t *Transport) admitting() grpc.ServerOption {
	return grpc.ChainStreamInterceptor(func(srv any, s grpc.ServerStream, _ *grpc.StreamServerInfo, handle grpc.StreamHandler) error {
		if err := t.admit(s.Context()); err != nil {
			return err
		}
		return handle(srv, s)
	})
}

// admittingCalls is admitting for calls.
func (t *Transport) admittingCalls() grpc.ServerOption {
	return grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handle grpc.UnaryHandler) (any, error) {
		if err := t.admit(ctx); err != nil {
			return nil, err
		}
		return handle(ctx, req)
	})
}

// admit is nil when Config.Admit takes the sender of ctx's stream or call, and otherwise the
// refusal the sender gets, which says why.
func (t *Transport) admit(ctx context.Context) error {
	if t.cfg.Admit == nil {
		return nil
	}
	var v uint64
	var from string
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		if vs := md.Get(versionHeader); len(vs) > 0 {
			v, _ = strconv.ParseUint(vs[0], 10, 32)
		}
		if ns := md.Get(nodeHeader); len(ns) > 0 {
			from = "node " + ns[0]
		}
	}
	err := t.cfg.Admit(uint32(v))
	if err == nil {
		return nil
	}
	if p, ok := grpcpeer.FromContext(ctx); ok && from == "" { // a release that names no node
		host, _, _ := net.SplitHostPort(p.Addr.String()) // not its port: that changes with each connection
		from = "a node on " + host
	}
	if t.refusals.due(from) {
		t.cfg.Logger.Warn("refusing a node of an older release", "from", from, "err", err)
	}
	return status.Error(codes.FailedPrecondition, err.Error())
}

// refusals remembers when each refused peer was last logged.
type refusals struct {
	mu     sync.Mutex
	logged map[string]time.Time
}

func (r *refusals) due(from string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if time.Since(r.logged[from]) < refusalLogEvery {
		return false
	}
	if r.logged == nil {
		r.logged = map[string]time.Time{}
	}
	r.logged[from] = time.Now()
	return true
}
