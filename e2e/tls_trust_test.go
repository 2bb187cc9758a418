package e2e

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/partita-db/partita/internal/controlplane/controlplanetest"
)

// One trust root for a cluster (issue 50): every node's HTTPS and CQL certificate is issued by
// the authority the nodes derive from the cluster secret, every node writes it to tls-ca.pem,
// and a client that trusts node 1's file and nothing else reaches every node: a Go HTTP client
// by the host it dials (and by localhost), curl --cacert, the Go SDK through nodes 2 and 3,
// and `partita cluster status --ca-file`, which without it refuses the nodes' certificates.
func TestClusterOneTrustRoot(t *testing.T) {
	t.Setenv("PARTITA_CLUSTER_SECRET", clusterSecret)
	cqlAddr := controlplanetest.FreeAddr(t)
	nodes := launchCluster(t, 3, true, func(i int) []string {
		if i == 1 {
			return []string{"--cql-addr", cqlAddr}
		}
		return nil
	})
	caFile := filepath.Join(nodes[0].DataDir, "tls-ca.pem")
	caPEM, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range nodes[1:] {
		other, err := os.ReadFile(filepath.Join(n.DataDir, "tls-ca.pem"))
		if err != nil || !bytes.Equal(other, caPEM) {
			t.Fatalf("node %d's tls-ca.pem differs from node 1's (%v)", i+2, err)
		}
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		t.Fatal("tls-ca.pem holds no certificate")
	}
	trusting := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	curl, _ := exec.LookPath("curl")

	for i, n := range nodes {
		retrying(t, fmt.Sprintf("GET /ready of node %d over HTTPS", i+1), func() error {
			resp, err := trusting.Get(n.Endpoint + "ready")
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			if b, _ := io.ReadAll(resp.Body); resp.StatusCode != http.StatusOK {
				return fmt.Errorf("%d %s", resp.StatusCode, b)
			}
			return nil
		})
		conn, err := tls.Dial("tcp", n.addr, &tls.Config{RootCAs: roots, ServerName: "localhost"})
		if err != nil {
			t.Fatalf("node %d by the name localhost: %v", i+1, err)
		}
		conn.Close()
		if curl != "" {
			// OpenSSL's verification, which Node's NODE_EXTRA_CA_CERTS uses too.
			if out, err := exec.Command(curl, "-sS", "--fail", "--cacert", caFile, n.Endpoint+"ready").CombinedOutput(); err != nil {
				t.Fatalf("curl --cacert %s %sready: %v\n%s", caFile, n.Endpoint, err, out)
			}
		}
	}
	conn, err := tls.Dial("tcp", cqlAddr, &tls.Config{RootCAs: roots})
	if err != nil {
		t.Fatalf("node 2's CQL port: %v", err)
	}
	conn.Close()

	// The Go SDK through nodes other than node 1, trusting node 1's file only.
	for _, n := range nodes {
		n.client = trusting
	}
	via2 := nodes[1].sdk(t)
	createDBAndContainer(t, via2, via2, 400)
	cs := containersOn(t, nodes[1:])
	cx := ctx(t)
	item, _ := json.Marshal(map[string]any{"id": "a", "pk": "k", "n": 1})
	if _, err := cs[0].UpsertItem(cx, azcosmos.NewPartitionKeyString("k"), item, nil); err != nil {
		t.Fatalf("a write through node 2: %v", err)
	}
	for i, c := range cs {
		retrying(t, fmt.Sprintf("the item read through node %d", i+2), func() error {
			_, err := c.ReadItem(cx, azcosmos.NewPartitionKeyString("k"), "a", nil)
			return err
		})
	}

	out, err := exec.Command(partitaBin, "cluster", "status", "--endpoint", nodes[1].Endpoint, "--ca-file", caFile).CombinedOutput()
	if err != nil {
		t.Fatalf("cluster status --ca-file: %v\n%s", err, out)
	}
	if strings.Count(string(out), " live") < 3 || strings.Contains(string(out), "did not answer") {
		t.Fatalf("cluster status --ca-file does not show three nodes answering:\n%s", out)
	}
	out, err = exec.Command(partitaBin, "cluster", "status", "--endpoint", nodes[1].Endpoint).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "certificate") {
		t.Fatalf("cluster status trusting the system's authorities only: %v\n%s", err, out)
	}
}
