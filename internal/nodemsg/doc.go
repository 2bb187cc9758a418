// Package nodemsg is how the calls between the nodes of a cluster (package nodecall: Go
// values, all the engine sees) travel on the cluster transport: the typed messages
// (nodemsg.proto, one message per kind of request, compiled by protoc-gen-go into
// nodemsg.pb.go), and the JSON of the releases before them. The node's wiring frames what its
// engine asks with Marshal, by the cluster's active version, reads the answer with
// UnmarshalAnswer, and answers what other nodes ask with Serve:
//
//	raw, err := nodemsg.Marshal(req, active)      // typed from v3, JSON before
//	out, err := transport.Call(ctx, node, raw)
//	ans, err := nodemsg.UnmarshalAnswer(out)      // either framing
//
//	// on the node asked
//	return nodemsg.Serve(raw, engine.ServeCall)   // answered in the request's framing
//
// The releases before these messages sent every node-to-node request as one JSON object, a
// union of five kinds. A node of this release still reads and answers those, and sends them
// itself until the cluster's version is clusterversion.NodeMessages: a node of the previous
// release would not read a typed message. A typed message is framed by one byte, Marker,
// before its protobuf encoding; a JSON object begins with '{', so a node tells the two apart
// by the first byte, and answers in the framing it was asked in.
//
// The kinds: a write for a partition's leader (Write), a split (Split), a budget share's ask
// (ShareAsk), a batch of a partition's items for a query or a scan (Read), a node's load
// figures (Figures), and the calls on one logical partition that a node delegates whole to a
// node holding its partition (ItemRead, ItemWrite, ItemDelete, ItemPatch, Batch, Procedure,
// FeedRead). Each has its answer; the item calls share ItemAnswer.
//
// After a change to nodemsg.proto, run go generate in this directory (protoc and
// protoc-gen-go on the PATH); the generated file is committed, so a build needs neither.
package nodemsg

//go:generate protoc --go_out=. --go_opt=paths=source_relative nodemsg.proto
