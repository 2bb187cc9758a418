package cqlexec

import (
	"encoding/binary"
	"net"
	"net/netip"
	"slices"
	"strconv"

	"github.com/partita-db/partita/internal/cqlvalue"
)

// The nodes of a cluster, as drivers learn them: system.local describes the node the client
// reached, system.peers and system.peers_v2 the others, each with the tokens it owns. Every
// node of a Partita cluster serves every partition (from its replica, or from a node that
// holds one, and it forwards writes to their leaders), so any assignment of tokens routes
// correctly; the ring is cut into
// eight slices per node, dealt out in turn by node id, so that token-aware drivers spread
// statements over every node.
//
// Cassandra 3.11's system.peers has no port: a driver connects to a peer's rpc_address on the
// port it reached the first node on. A peer whose CQL port is not this node's cannot be
// described there, and is left out (nodes that share one machine); system.peers_v2, which
// Cassandra 4 drivers read first, lists every peer with its port.

// peer is another node of the cluster as the system tables show it.
type peer struct {
	id         uint64
	listen     net.IP // its cluster address's host
	listenPort int
	native     net.IP // its CQL address's host
	nativePort int
	tokens     [][]byte
}

// ring is the cluster as the system tables show it: this node's id, tokens and CQL port, and
// the other live nodes.
type ring struct {
	self   uint64
	tokens [][]byte
	port   int
	peers  []peer
}

// ring describes the cluster; ok is false on a node alone or when the cluster's membership is
// not known.
func (x *Executor) ring() (r ring, ok bool) {
	self, nodes, err := x.eng.ClusterNodes()
	if err != nil || self == 0 {
		return ring{}, false
	}
	var ids []uint64
	for _, n := range nodes {
		ids = append(ids, n.ID)
	}
	if !slices.Contains(ids, self) {
		ids = append(ids, self)
	}
	slices.Sort(ids)
	r = ring{self: self, tokens: ringTokens(ids, self)}
	for _, n := range nodes {
		if n.ID == self {
			_, r.port = splitHostPort(n.CQL)
			continue
		}
		if n.CQL == "" {
			continue // its CQL API is off
		}
		p := peer{id: n.ID, tokens: ringTokens(ids, n.ID)}
		p.native, p.nativePort = splitHostPort(n.CQL)
		p.listen, p.listenPort = splitHostPort(n.Addr)
		if p.native == nil || p.native.IsUnspecified() {
			p.native = p.listen // listening on every interface: reached at its cluster host
		}
		if p.native != nil {
			r.peers = append(r.peers, p)
		}
	}
	return r, true
}

// Peers are the Cassandra API addresses of the cluster's other live nodes, as system.peers_v2
// lists them; none on a node alone.
func (x *Executor) Peers() ([]netip.AddrPort, error) {
	r, ok := x.ring()
	if !ok {
		return nil, nil
	}
	var out []netip.AddrPort
	for _, p := range r.peers {
		if a, ok := netip.AddrFromSlice(p.native); ok {
			out = append(out, netip.AddrPortFrom(a.Unmap(), uint16(p.nativePort)))
		}
	}
	return out, nil
}

func splitHostPort(addr string) (net.IP, int) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, 0
	}
	n, _ := strconv.Atoi(port)
	return net.ParseIP(host), n
}

// ringTokens are node id's tokens among ids (sorted): eight slices of the ring per node, the
// last token of each, dealt out in turn.
func ringTokens(ids []uint64, id uint64) [][]byte {
	n := uint64(len(ids) * 8)
	step := ^uint64(0) / n
	at := uint64(slices.Index(ids, id))
	var out [][]byte
	for k := at; k < n; k += uint64(len(ids)) {
		u := (k+1)*step - 1
		out = append(out, []byte(strconv.FormatInt(int64(u^1<<63), 10)))
	}
	return out
}

// hostID is a node's host_id: a name-based UUID of its id.
func hostID(id uint64) [16]byte {
	return nameUUID(binary.BigEndian.AppendUint64([]byte("partita-node-"), id))
}

// ip4 is ip in the form inet columns take: four bytes for an IPv4 address.
func ip4(ip net.IP) []byte {
	if v4 := ip.To4(); v4 != nil {
		return v4
	}
	return ip.To16()
}

func peerRows(x *Executor, sch *schema, s *Session) []*rowDoc {
	r, ok := x.ring()
	if !ok {
		return nil
	}
	v := sch.uuid()
	var out []*rowDoc
	for _, p := range r.peers {
		if p.nativePort != r.port {
			continue // not describable without a port (see above)
		}
		h := hostID(p.id)
		out = append(out, cells(map[string][]byte{
			"peer": ip4(p.listen), "data_center": []byte(dataCenter), "host_id": h[:], "preferred_ip": ip4(p.native),
			"rack": []byte(rack), "release_version": []byte(releaseVersion), "rpc_address": ip4(p.native),
			"schema_version": v[:], "tokens": cqlvalue.EncodeSet(cqlvalue.Native(cqlvalue.Text), p.tokens...),
		}))
	}
	return out
}

func peerV2Rows(x *Executor, sch *schema, s *Session) []*rowDoc {
	r, ok := x.ring()
	if !ok {
		return nil
	}
	v := sch.uuid()
	var out []*rowDoc
	for _, p := range r.peers {
		h := hostID(p.id)
		out = append(out, cells(map[string][]byte{
			"peer": ip4(p.listen), "peer_port": cqlvalue.EncodeInt(int32(p.listenPort)), "data_center": []byte(dataCenter),
			"host_id": h[:], "native_address": ip4(p.native), "native_port": cqlvalue.EncodeInt(int32(p.nativePort)),
			"preferred_ip": ip4(p.native), "preferred_port": cqlvalue.EncodeInt(int32(p.nativePort)), "rack": []byte(rack),
			"release_version": []byte(releaseVersion), "schema_version": v[:],
			"tokens": cqlvalue.EncodeSet(cqlvalue.Native(cqlvalue.Text), p.tokens...),
		}))
	}
	return out
}
