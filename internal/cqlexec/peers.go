package cqlexec

import (
	"cmp"
	"encoding/binary"
	"maps"
	"math"
	"net"
	"net/netip"
	"slices"
	"strconv"

	"github.com/partita-db/partita/internal/cqlvalue"
	"github.com/partita-db/partita/internal/epk"
)

// The nodes of a cluster, as drivers learn them: system.local describes the node the client
// reached, system.peers and system.peers_v2 the others, each with the tokens it owns. A node
// owns the arcs of the ring whose partitions it leads, so that a token-aware driver sends a
// statement straight to the node that runs it. The ring is one for all tables, and each
// table's partitions have their own arcs and leaders: an arc goes to the node that leads it in
// most tables (ledTokens). Every node serves every partition (from its replica, or through a
// node that holds one, and it forwards writes to their leaders), so any assignment of tokens
// routes correctly, and a driver that learned the ring before a leadership moved only takes
// one more hop. Before any table has a known leader, the ring is cut into eight slices per
// node, dealt out in turn by node id.

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

// ring describes the cluster, with each node's tokens when withTokens is set; ok is false on
// a node alone or when the cluster's membership is not known.
func (x *Executor) ring(withTokens bool) (r ring, ok bool) {
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
	tokensOf := func(uint64) [][]byte { return nil }
	if withTokens {
		if led, ok := x.ledTokens(ids); ok {
			tokensOf = func(id uint64) [][]byte { return led[id] }
		} else {
			tokensOf = func(id uint64) [][]byte { return ringTokens(ids, id) }
		}
	}
	r = ring{self: self, tokens: tokensOf(self)}
	for _, n := range nodes {
		if n.ID == self {
			_, r.port = splitHostPort(n.CQL)
			continue
		}
		if n.CQL == "" {
			continue // its CQL API is off
		}
		p := peer{id: n.ID, tokens: tokensOf(n.ID)}
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
	r, ok := x.ring(false)
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

// ledTokens are the tokens of each of the live nodes ids: the ring cut at every end of a CQL
// table's partition, each arc given to the node that leads the partition holding it in the
// most tables (the lowest id among as many), an arc no live node is known to lead joined to
// the next, and a node's tokens the last of each of its runs of arcs (and the lowest token
// not taken for a node that leads nothing). ok is false when no partition of any table has a
// known, live leader.
func (x *Executor) ledTokens(ids []uint64) (map[uint64][][]byte, bool) {
	sch, err := x.schema()
	if err != nil {
		return nil, false
	}
	var tables [][]arc // each table's arcs, in ring order
	for _, ks := range sch.keyspaces {
		for _, t := range ks.tables {
			if t.virtual != nil {
				continue
			}
			leaders, err := x.eng.Leaders(ks.name, t.name)
			if err != nil {
				continue
			}
			var arcs []arc
			for _, l := range leaders {
				first, ok := epk.FirstToken(l.Range.Min)
				if !ok {
					continue // past the last token: no row's
				}
				end := int64(math.MaxInt64)
				if next, ok := epk.FirstToken(l.Range.Max); ok {
					if next <= first {
						continue // holds no token
					}
					end = next - 1
				}
				arcs = append(arcs, arc{end, l.Leader})
			}
			tables = append(tables, arcs)
		}
	}
	return dealRing(tables, ids)
}

// arc is the arc of the ring that one partition of a table holds: up to its last token.
type arc struct {
	end    int64
	leader uint64 // 0: not known
}

// dealRing gives each arc of the ring to the live node (of ids) that leads it in the most
// tables; see ledTokens.
func dealRing(tables [][]arc, ids []uint64) (map[uint64][][]byte, bool) {
	ends := map[int64]bool{}
	for _, arcs := range tables {
		for _, a := range arcs {
			ends[a.end] = true
		}
	}
	cuts := slices.Sorted(maps.Keys(ends))
	owners := make([]uint64, len(cuts))
	known := false
	for i, end := range cuts {
		votes := map[uint64]int{}
		for _, arcs := range tables {
			k, _ := slices.BinarySearchFunc(arcs, end, func(a arc, t int64) int { return cmp.Compare(a.end, t) })
			if k < len(arcs) && slices.Contains(ids, arcs[k].leader) {
				votes[arcs[k].leader]++
			}
		}
		for _, id := range ids {
			if votes[id] > votes[owners[i]] {
				owners[i] = id
			}
		}
		known = known || owners[i] != 0
	}
	if !known {
		return nil, false
	}
	// An arc nobody is known to lead goes with the next arc, and trailing ones with the last
	// that has an owner.
	for i := len(owners) - 2; i >= 0; i-- {
		if owners[i] == 0 {
			owners[i] = owners[i+1]
		}
	}
	for i := range owners {
		if owners[i] == 0 {
			owners[i] = owners[i-1]
		}
	}
	owned := map[int64]uint64{}
	for i, end := range cuts {
		if i+1 < len(cuts) && owners[i+1] == owners[i] {
			continue // the run goes on
		}
		owned[end] = owners[i]
	}
	// A node that leads nothing still gets one token, the lowest not taken, and so owns that
	// one token only (the arc from the highest token round to it): drivers ignore a node
	// without tokens (an empty set is null in CQL), and a token in 2^64 takes one hop more.
	next := int64(math.MinInt64 + 1) // the lowest token
	for _, id := range ids {
		if slices.Contains(slices.Collect(maps.Values(owned)), id) {
			continue
		}
		for ; owned[next] != 0; next++ {
		}
		owned[next] = id
	}
	out := map[uint64][][]byte{}
	for _, t := range slices.Sorted(maps.Keys(owned)) {
		out[owned[t]] = append(out[owned[t]], []byte(strconv.FormatInt(t, 10)))
	}
	return out, true
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
	r, ok := x.ring(true)
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
	r, ok := x.ring(true)
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
