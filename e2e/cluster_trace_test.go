package e2e

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
)

// A write through a node that does not lead its partition is one trace: the gateway's span on
// the node the client called, its forwarding span, and the span of the node that served the
// write, each the child of the one before, all carrying the request's activity id, which the
// serving node's log names too. A client that sends a W3C traceparent header has its trace
// continued. The spans are read as an OpenTelemetry collector receives them (OTLP over gRPC).
func TestClusterTraces(t *testing.T) {
	sink := startTraceSink(t)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "100") // export every 100 ms rather than every 5 s
	nodes := startClusterOf(t, 3, func(int) []string {
		return []string{"--otlp-endpoint", "http://" + sink.addr, "--log-level", "debug"}
	})
	cx := ctx(t)
	createDBAndContainer(t, nodes[0].sdk(t), nodes[0].sdk(t), 400) // one partition, led by node 0
	activities := map[string]int{}                                 // activity id -> the node written through
	for i, n := range nodes {
		c, err := n.sdk(t).NewContainer("db", "c")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := json.Marshal(map[string]any{"id": fmt.Sprint("item", i), "pk": "p"})
		var resp azcosmos.ItemResponse
		retrying(t, "create", func() error {
			resp, err = c.CreateItem(cx, azcosmos.NewPartitionKeyString("p"), body, nil)
			return err
		})
		activities[resp.ActivityID] = i
	}

	// Every write's trace: its gateway span, and when it was forwarded, the two spans after.
	forwarded := 0
	for activity, via := range activities {
		var gw *sinkSpan
		waitFor(t, "the gateway's span of activity "+activity, func() bool {
			gw = sink.find(func(s sinkSpan) bool {
				return s.attrs["partita.activity_id"] == activity && strings.HasPrefix(s.name, "cosmos POST")
			})
			return gw != nil
		})
		if gw.node != nodes[via].args[1] {
			t.Errorf("activity %s: gateway span from %s, want %s (the node written through)", activity, gw.node, nodes[via].args[1])
		}
		if gw.name != "cosmos POST dbs/*/colls/*/docs" || gw.attrs["http.response.status_code"] != "201" {
			t.Errorf("activity %s: gateway span %q with status %s", activity, gw.name, gw.attrs["http.response.status_code"])
		}
		time.Sleep(300 * time.Millisecond) // two export rounds: the other spans came with it or before
		fw := sink.find(func(s sinkSpan) bool { return s.name == "partita.forward" && s.parent == gw.span })
		if fw == nil {
			continue // written on the leader's node
		}
		forwarded++
		var served *sinkSpan
		waitFor(t, "the serving node's span of activity "+activity, func() bool {
			served = sink.find(func(s sinkSpan) bool { return s.name == "partita.forwarded" && s.parent == fw.span })
			return served != nil
		})
		if fw.trace != gw.trace || served.trace != gw.trace {
			t.Errorf("activity %s: the spans are in traces %s, %s and %s", activity, gw.trace, fw.trace, served.trace)
		}
		if fw.node != gw.node || served.node == gw.node {
			t.Errorf("activity %s: forwarded from %s to %s, the gateway on %s", activity, fw.node, served.node, gw.node)
		}
		for _, n := range nodes {
			if n.args[1] == served.node && !strings.Contains(n.Logs(), "activity="+activity) {
				t.Errorf("the log of %s, which served activity %s, does not name it", served.node, activity)
			}
		}
	}
	if forwarded == 0 {
		t.Fatal("no write was forwarded: every node led the partition?")
	}

	// A client's own trace goes on.
	traceID, parentID := "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	cred, _ := azcosmos.NewKeyCredential(emulatorKey)
	traced, err := azcosmos.NewClientWithKey(nodes[1].Endpoint, cred, &azcosmos.ClientOptions{ClientOptions: azcore.ClientOptions{
		Transport: withTraceparent{nodes[1].client, "00-" + traceID + "-" + parentID + "-01"}}})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := traced.NewContainer("db", "c")
	if _, err := c.ReadItem(cx, azcosmos.NewPartitionKeyString("p"), "item0", nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the span continuing the client's trace", func() bool {
		return sink.find(func(s sinkSpan) bool {
			return s.trace == traceID && s.parent == parentID && s.name == "cosmos GET dbs/*/colls/*/docs/*"
		}) != nil
	})
	t.Logf("%d of %d writes forwarded, each one trace over two nodes; %d spans received", forwarded, len(activities), sink.count())
}

// withTraceparent sends a W3C traceparent header with every request, as a traced client does.
type withTraceparent struct {
	c           *http.Client
	traceparent string
}

func (w withTraceparent) Do(r *http.Request) (*http.Response, error) {
	r.Header.Set("traceparent", w.traceparent)
	return w.c.Do(r)
}

// traceSink is an OpenTelemetry collector's trace receiver (OTLP over gRPC) that keeps the
// spans it is sent.
type traceSink struct {
	coltracepb.UnimplementedTraceServiceServer
	addr  string
	mu    sync.Mutex
	spans []sinkSpan
}

// sinkSpan is a received span: the node that sent it (its service.instance.id), its ids in
// hex, and its attributes as strings.
type sinkSpan struct {
	node, name, trace, span, parent string
	attrs                           map[string]string
}

func startTraceSink(t *testing.T) *traceSink {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &traceSink{addr: ln.Addr().String()}
	g := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(g, s)
	go g.Serve(ln)
	t.Cleanup(g.Stop)
	return s
}

func (s *traceSink) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		var node string
		for _, a := range rs.GetResource().GetAttributes() {
			if a.Key == "service.instance.id" {
				node = a.Value.GetStringValue()
			}
		}
		for _, ss := range rs.ScopeSpans {
			for _, sp := range ss.Spans {
				s.spans = append(s.spans, received(node, sp))
			}
		}
	}
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

func received(node string, sp *tracepb.Span) sinkSpan {
	out := sinkSpan{node: node, name: sp.Name, trace: hex.EncodeToString(sp.TraceId), span: hex.EncodeToString(sp.SpanId),
		parent: hex.EncodeToString(sp.ParentSpanId), attrs: map[string]string{}}
	for _, a := range sp.Attributes {
		v := a.Value
		switch {
		case v.GetStringValue() != "":
			out.attrs[a.Key] = v.GetStringValue()
		default:
			out.attrs[a.Key] = fmt.Sprint(v.GetIntValue())
		}
	}
	return out
}

// find is the first span received that match accepts; nil when none.
func (s *traceSink) find(match func(sinkSpan) bool) *sinkSpan {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.spans {
		if match(s.spans[i]) {
			sp := s.spans[i]
			return &sp
		}
	}
	return nil
}

func (s *traceSink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.spans)
}

// waitFor polls cond for up to ten seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within 10 s", what)
		}
	}
}
