// Package nodetls gives the nodes of a cluster the TLS they speak to each other with, made
// from the one secret the operator gives every node.
//
// The secret derives a certificate authority: its Ed25519 key comes from the secret through
// HKDF, and its certificate is made from fixed fields, so every node that holds the secret
// makes the same authority without any file being copied between them. Each node then issues
// itself a certificate signed by that authority, with a key of its own made at start-up, and
// requires the same of its peers, both ways (mutual TLS 1.3). A process without the secret
// can neither be accepted as a peer nor accept one: it cannot join, send Raft messages, or
// pose as a node to one.
//
//	id, err := nodetls.New(secret)
//	srv := grpc.NewServer(grpc.Creds(credentials.NewTLS(id.Server())))
//	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(id.Client())))
//
// What the secret proves is membership of the cluster, not which node a peer is: a node says
// its id in what it sends, and the cluster checks it against its membership.
package nodetls
