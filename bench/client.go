package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/partita-db/partita/internal/masterkey"
)

// Result is what one request (or one drained query) returned.
type Result struct {
	Charge float64 // x-ms-request-charge, summed over query pages
	ETag   string
	Body   []byte // the item for reads; the Documents of a query, one JSON value each
	Docs   [][]byte
}

// Client is the small surface the workloads need; sdkClient, rawClient and etcdClient
// implement it.
type Client interface {
	// Setup creates the database and container if missing (deleting the container first
	// when reset), with manual throughput ru RU/s and the indexing policy indexing (nil: the
	// server's default).
	Setup(ctx context.Context, db, container string, ru int, indexing json.RawMessage, reset bool) error
	Create(ctx context.Context, pk string, body []byte) (Result, error)
	Upsert(ctx context.Context, pk string, body []byte) (Result, error)
	Replace(ctx context.Context, pk, id string, body []byte, etag string) (Result, error)
	// Incr patches the item, adding 1 to its number n.
	Incr(ctx context.Context, pk, id string) (Result, error)
	Read(ctx context.Context, pk, id string) (Result, error)
	// Query drains every page of a query; pk "" means cross-partition.
	Query(ctx context.Context, pk, query string, params map[string]any) (Result, error)
	// Throttled counts the 429 responses seen so far, retried ones included.
	Throttled() int64
}

// StatusError carries the HTTP status of a failed request.
type StatusError struct {
	Status int
	Msg    string
}

func (e *StatusError) Error() string { return fmt.Sprintf("status %d: %s", e.Status, e.Msg) }

// statusOf returns the HTTP status of a request error, 0 if it has none.
func statusOf(err error) int {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Status
	}
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode
	}
	return 0
}

func newHTTPClient(insecure bool, conns int) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = conns * 2
	tr.MaxIdleConnsPerHost = conns * 2
	if insecure {
		tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true}
	}
	return &http.Client{Transport: tr, Timeout: time.Minute}
}

// noIndexing is the -index-policy none: consistent and automatic, but no path indexed.
var noIndexing = json.RawMessage(`{"indexingMode":"consistent","automatic":true,"includedPaths":[],"excludedPaths":[{"path":"/*"}]}`)

// indexingPolicy is the container's indexing policy named by -index-policy; nil leaves the
// server's default.
func indexingPolicy(name string) (json.RawMessage, error) {
	switch name {
	case "default":
		return nil, nil
	case "none":
		return noIndexing, nil
	}
	return nil, fmt.Errorf("unknown -index-policy %q (want default or none)", name)
}

func newClient(mode, endpoint, key string, insecure bool, conns int) (Client, error) {
	if mode == "etcd" {
		return newEtcdClient(endpoint)
	}
	hc := newHTTPClient(insecure, conns)
	k, err := masterkey.Parse(key)
	if err != nil {
		return nil, fmt.Errorf("key: %w", err)
	}
	raw := &rawClient{key: k, hc: hc}
	for _, ep := range strings.Split(endpoint, ",") {
		raw.bases = append(raw.bases, strings.TrimSuffix(ep, "/"))
	}
	switch mode {
	case "sdk":
		if len(raw.bases) > 1 {
			return nil, fmt.Errorf("several endpoints need -mode raw")
		}
		return newSDKClient(endpoint, key, hc, raw)
	case "raw":
		return raw, nil
	}
	return nil, fmt.Errorf("unknown -mode %q (want sdk, raw or etcd)", mode)
}

// ---- SDK client ----

type sdkClient struct {
	raw       *rawClient // creates a container with an indexing policy, see Setup
	c         *azcosmos.Client
	ct        *azcosmos.ContainerClient
	throttled atomic.Int64
}

// count429 is a per-retry policy counting throttled responses the SDK then retries.
type count429 struct{ n *atomic.Int64 }

func (p count429) Do(req *policy.Request) (*http.Response, error) {
	resp, err := req.Next()
	if resp != nil && resp.StatusCode == http.StatusTooManyRequests {
		p.n.Add(1)
	}
	return resp, err
}

func newSDKClient(endpoint, key string, hc *http.Client, raw *rawClient) (*sdkClient, error) {
	cred, err := azcosmos.NewKeyCredential(key)
	if err != nil {
		return nil, err
	}
	s := &sdkClient{raw: raw}
	s.c, err = azcosmos.NewClientWithKey(endpoint, cred, &azcosmos.ClientOptions{ClientOptions: azcore.ClientOptions{
		Transport:        hc,
		PerRetryPolicies: []policy.Policy{count429{&s.throttled}},
	}})
	return s, err
}

func (s *sdkClient) Throttled() int64 { return s.throttled.Load() }

func (s *sdkClient) Setup(ctx context.Context, db, container string, ru int, indexing json.RawMessage, reset bool) error {
	if indexing != nil {
		// The SDK drops an empty includedPaths (omitempty); the raw client sends the policy
		// as written, so that every server and both modes get the same container definition.
		if err := s.raw.Setup(ctx, db, container, ru, indexing, reset); err != nil {
			return err
		}
		d, err := s.c.NewDatabase(db)
		if err != nil {
			return err
		}
		s.ct, err = d.NewContainer(container)
		return err
	}
	if _, err := s.c.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: db}, nil); err != nil && statusOf(err) != http.StatusConflict {
		return fmt.Errorf("create database: %w", err)
	}
	d, err := s.c.NewDatabase(db)
	if err != nil {
		return err
	}
	if s.ct, err = d.NewContainer(container); err != nil {
		return err
	}
	if reset {
		if _, err := s.ct.Delete(ctx, nil); err != nil && statusOf(err) != http.StatusNotFound {
			return fmt.Errorf("delete container: %w", err)
		}
	}
	tp := azcosmos.NewManualThroughputProperties(int32(ru))
	_, err = d.CreateContainer(ctx, azcosmos.ContainerProperties{ID: container,
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}, Version: 2}},
		&azcosmos.CreateContainerOptions{ThroughputProperties: &tp})
	if err != nil && statusOf(err) != http.StatusConflict {
		return fmt.Errorf("create container: %w", err)
	}
	return nil
}

func itemResult(r azcosmos.ItemResponse, err error) (Result, error) {
	return Result{Charge: float64(r.RequestCharge), ETag: string(r.ETag), Body: r.Value}, err
}

func (s *sdkClient) Create(ctx context.Context, pk string, body []byte) (Result, error) {
	return itemResult(s.ct.CreateItem(ctx, azcosmos.NewPartitionKeyString(pk), body, nil))
}

func (s *sdkClient) Upsert(ctx context.Context, pk string, body []byte) (Result, error) {
	return itemResult(s.ct.UpsertItem(ctx, azcosmos.NewPartitionKeyString(pk), body, nil))
}

func (s *sdkClient) Replace(ctx context.Context, pk, id string, body []byte, etag string) (Result, error) {
	e := azcore.ETag(etag)
	return itemResult(s.ct.ReplaceItem(ctx, azcosmos.NewPartitionKeyString(pk), id, body, &azcosmos.ItemOptions{IfMatchEtag: &e}))
}

func (s *sdkClient) Incr(ctx context.Context, pk, id string) (Result, error) {
	var ops azcosmos.PatchOperations
	ops.AppendIncrement("/n", 1)
	return itemResult(s.ct.PatchItem(ctx, azcosmos.NewPartitionKeyString(pk), id, ops, nil))
}

func (s *sdkClient) Read(ctx context.Context, pk, id string) (Result, error) {
	return itemResult(s.ct.ReadItem(ctx, azcosmos.NewPartitionKeyString(pk), id, nil))
}

func (s *sdkClient) Query(ctx context.Context, pk, q string, params map[string]any) (Result, error) {
	key := azcosmos.NewPartitionKey()
	if pk != "" {
		key = azcosmos.NewPartitionKeyString(pk)
	}
	opts := &azcosmos.QueryOptions{}
	for n, v := range params {
		opts.QueryParameters = append(opts.QueryParameters, azcosmos.QueryParameter{Name: n, Value: v})
	}
	var res Result
	pager := s.ct.NewQueryItemsPager(q, key, opts)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return res, err
		}
		res.Charge += float64(page.RequestCharge)
		res.Docs = append(res.Docs, page.Items...)
	}
	return res, nil
}

// ---- raw client: hand-signed REST requests ----

type rawClient struct {
	// bases are the endpoints, without their final slash: requests go to each in turn (the
	// nodes of a cluster, which all serve the same account).
	bases     []string
	next      atomic.Uint64
	key       *masterkey.Key
	hc        *http.Client
	coll      string // "dbs/<db>/colls/<container>"
	throttled atomic.Int64
	// consistency, when set, is every request's x-ms-consistency-level.
	consistency string
}

func (c *rawClient) Throttled() int64 { return c.throttled.Load() }

// do sends a signed request; resType and resLink are what is signed. It retries 429s
// (after x-ms-retry-after-ms) up to 9 times, as the SDKs do.
func (c *rawClient) do(ctx context.Context, verb, path, resType, resLink string, body []byte, hdr map[string]string) (*http.Response, []byte, error) {
	for attempt := 0; ; attempt++ {
		base := c.bases[c.next.Add(1)%uint64(len(c.bases))]
		req, err := http.NewRequestWithContext(ctx, verb, base+path, bytes.NewReader(body))
		if err != nil {
			return nil, nil, err
		}
		date := time.Now().UTC().Format(http.TimeFormat)
		req.Header.Set("x-ms-date", date)
		req.Header.Set("x-ms-version", "2020-07-15")
		req.Header.Set("Authorization", c.key.Authorization(verb, resType, resLink, date))
		req.Header.Set("Accept", "application/json")
		if body != nil && req.Header.Get("Content-Type") == "" {
			req.Header.Set("Content-Type", "application/json")
		}
		if c.consistency != "" {
			req.Header.Set("x-ms-consistency-level", c.consistency)
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := c.hc.Do(req)
		if err != nil {
			return nil, nil, err
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, nil, err
		}
		if resp.StatusCode == http.StatusTooManyRequests {
			c.throttled.Add(1)
			if attempt < 9 {
				ms, _ := strconv.Atoi(resp.Header.Get("x-ms-retry-after-ms"))
				select {
				case <-time.After(time.Duration(max(ms, 5)) * time.Millisecond):
					continue
				case <-ctx.Done():
					return nil, nil, ctx.Err()
				}
			}
		}
		if resp.StatusCode >= 300 {
			return resp, b, &StatusError{Status: resp.StatusCode, Msg: string(bytes.TrimSpace(b))}
		}
		return resp, b, nil
	}
}

func charge(resp *http.Response) float64 {
	if resp == nil {
		return 0
	}
	f, _ := strconv.ParseFloat(resp.Header.Get("x-ms-request-charge"), 64)
	return f
}

func pkHeader(pk string) string {
	b, _ := json.Marshal([]string{pk})
	return string(b)
}

func (c *rawClient) Setup(ctx context.Context, db, container string, ru int, indexing json.RawMessage, reset bool) error {
	body, _ := json.Marshal(map[string]string{"id": db})
	if _, _, err := c.do(ctx, "POST", "/dbs", "dbs", "", body, nil); err != nil && statusOf(err) != http.StatusConflict {
		return fmt.Errorf("create database: %w", err)
	}
	dbLink := "dbs/" + db
	c.coll = dbLink + "/colls/" + container
	if reset {
		if _, _, err := c.do(ctx, "DELETE", "/"+c.coll, "colls", c.coll, nil, nil); err != nil && statusOf(err) != http.StatusNotFound {
			return fmt.Errorf("delete container: %w", err)
		}
	}
	spec := map[string]any{"id": container,
		"partitionKey": map[string]any{"paths": []string{"/pk"}, "kind": "Hash", "version": 2}}
	if indexing != nil {
		spec["indexingPolicy"] = indexing
	}
	body, _ = json.Marshal(spec)
	_, _, err := c.do(ctx, "POST", "/"+dbLink+"/colls", "colls", dbLink, body, map[string]string{"x-ms-offer-throughput": strconv.Itoa(ru)})
	if statusOf(err) == http.StatusConflict && indexing != nil && !c.hasIndexing(ctx, indexing) {
		fmt.Fprintf(os.Stderr, "bench: container %s exists with another indexing policy; -index-policy applies only to a new one (-reset recreates it)\n", c.coll)
	}
	if err != nil && statusOf(err) != http.StatusConflict {
		return fmt.Errorf("create container: %w", err)
	}
	return nil
}

// hasIndexing tells whether the existing container excludes the same paths from its index as
// the policy want (servers rewrite policies, e.g. cosmium fills in an empty includedPaths).
func (c *rawClient) hasIndexing(ctx context.Context, want json.RawMessage) bool {
	type policy struct {
		ExcludedPaths []struct{ Path string } `json:"excludedPaths"`
	}
	excluded := func(p policy) string {
		var s []string
		for _, e := range p.ExcludedPaths {
			s = append(s, e.Path)
		}
		slices.Sort(s)
		return strings.Join(s, ",")
	}
	_, b, err := c.do(ctx, "GET", "/"+c.coll, "colls", c.coll, nil, nil)
	var have struct {
		IndexingPolicy policy `json:"indexingPolicy"`
	}
	var w policy
	if err != nil || json.Unmarshal(b, &have) != nil || json.Unmarshal(want, &w) != nil {
		return false
	}
	return excluded(have.IndexingPolicy) == excluded(w)
}

func (c *rawClient) item(ctx context.Context, verb, pk, id string, body []byte, hdr map[string]string) (Result, error) {
	hdr["x-ms-documentdb-partitionkey"] = pkHeader(pk)
	path, link := "/"+c.coll+"/docs", c.coll
	if id != "" {
		link = c.coll + "/docs/" + id
		path = "/" + c.coll + "/docs/" + url.PathEscape(id)
	}
	resp, b, err := c.do(ctx, verb, path, "docs", link, body, hdr)
	r := Result{Charge: charge(resp), Body: b}
	if resp != nil {
		r.ETag = resp.Header.Get("etag")
	}
	return r, err
}

func (c *rawClient) Create(ctx context.Context, pk string, body []byte) (Result, error) {
	return c.item(ctx, "POST", pk, "", body, map[string]string{})
}

func (c *rawClient) Upsert(ctx context.Context, pk string, body []byte) (Result, error) {
	return c.item(ctx, "POST", pk, "", body, map[string]string{"x-ms-documentdb-is-upsert": "true"})
}

func (c *rawClient) Replace(ctx context.Context, pk, id string, body []byte, etag string) (Result, error) {
	return c.item(ctx, "PUT", pk, id, body, map[string]string{"If-Match": etag})
}

func (c *rawClient) Incr(ctx context.Context, pk, id string) (Result, error) {
	return c.item(ctx, "PATCH", pk, id, []byte(`{"operations":[{"op":"incr","path":"/n","value":1}]}`), map[string]string{})
}

func (c *rawClient) Read(ctx context.Context, pk, id string) (Result, error) {
	return c.item(ctx, "GET", pk, id, nil, map[string]string{})
}

func (c *rawClient) Query(ctx context.Context, pk, q string, params map[string]any) (Result, error) {
	type param struct {
		Name  string `json:"name"`
		Value any    `json:"value"`
	}
	spec := struct {
		Query      string  `json:"query"`
		Parameters []param `json:"parameters"`
	}{Query: q, Parameters: []param{}}
	for n, v := range params {
		spec.Parameters = append(spec.Parameters, param{n, v})
	}
	body, _ := json.Marshal(spec)
	hdr := map[string]string{"Content-Type": "application/query+json", "x-ms-documentdb-isquery": "true"}
	if pk != "" {
		hdr["x-ms-documentdb-partitionkey"] = pkHeader(pk)
	} else {
		hdr["x-ms-documentdb-query-enablecrosspartition"] = "true"
	}
	var res Result
	for {
		resp, b, err := c.do(ctx, "POST", "/"+c.coll+"/docs", "docs", c.coll, body, hdr)
		res.Charge += charge(resp)
		if err != nil {
			return res, err
		}
		var page struct{ Documents []json.RawMessage }
		if err := json.Unmarshal(b, &page); err != nil {
			return res, fmt.Errorf("query response: %w", err)
		}
		for _, d := range page.Documents {
			res.Docs = append(res.Docs, d)
		}
		next := resp.Header.Get("x-ms-continuation")
		if next == "" {
			return res, nil
		}
		hdr["x-ms-continuation"] = next
	}
}
