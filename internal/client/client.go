package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/partita-db/partita/internal/masterkey"
)

// Options configures a Client.
type Options struct {
	Key string // the account key, base64
	// Insecure skips verifying the server's TLS certificate (for the self-signed one).
	Insecure bool
	// RootCAs, when set, are the only authorities the server's certificate may be issued by
	// (a node's tls-ca.pem, which serves every node of its cluster); nil: the system's.
	RootCAs *x509.CertPool
	// Timeout bounds one HTTP exchange; zero means 60 s.
	Timeout time.Duration
	// MaxThrottleRetries is how many times a throttled request is retried before its 429 is
	// returned; zero means 9, as the SDKs do; negative means never.
	MaxThrottleRetries int
	// MaxThrottleWait bounds the total time spent waiting on 429s for one request; zero means
	// 30 s, as the SDKs do.
	MaxThrottleWait time.Duration
	// OnThrottle, when set, is told of each 429 that is about to be retried.
	OnThrottle func(wait time.Duration)
}

// Client sends signed requests to one server. It is safe for concurrent use.
type Client struct {
	base string // scheme://host:port, no trailing slash
	key  *masterkey.Key
	http *http.Client
	opts Options
}

// New makes a client for the server at endpoint (the URL an SDK is configured with).
func New(endpoint string, opts Options) (*Client, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("endpoint %q: want http(s)://host:port/", endpoint)
	}
	k, err := masterkey.Parse(opts.Key)
	if err != nil {
		return nil, fmt.Errorf("key: %w", err)
	}
	if opts.Timeout == 0 {
		opts.Timeout = 60 * time.Second
	}
	if opts.MaxThrottleRetries == 0 {
		opts.MaxThrottleRetries = 9
	}
	if opts.MaxThrottleWait == 0 {
		opts.MaxThrottleWait = 30 * time.Second
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if opts.Insecure {
		tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true}
	} else if opts.RootCAs != nil {
		tr.TLSClientConfig = &tls.Config{RootCAs: opts.RootCAs}
	}
	tr.MaxIdleConnsPerHost = 64
	return &Client{
		base: u.Scheme + "://" + u.Host,
		key:  k,
		http: &http.Client{Transport: tr, Timeout: opts.Timeout},
		opts: opts,
	}, nil
}

// Request is one REST call.
type Request struct {
	Method string
	// Type is the resource type the request is signed for ("dbs", "colls", "docs", "offers",
	// "partitions", ...), and Link the resource link it is signed with, unescaped
	// ("dbs/db1/colls/c1"). For a feed (a list or a create) Link names the parent and Feed is
	// set, so the path gets "/<Type>" appended.
	Type string
	Link string
	Feed bool
	// Path, when set, is the URL path used instead of the one made from Link and Type.
	Path   string
	Header http.Header
	Body   []byte
}

// Response is a successful (2xx or 304) answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
	// Charge is the request charge of the answer that was returned.
	Charge float64
	// Throttled counts the 429s that were retried before this answer.
	Throttled int
}

// Error is a failed answer: any status other than 2xx or 304 (after 429 retries ran out).
type Error struct {
	Status    int
	SubStatus int
	Code      string
	Message   string
	// RetryAfter is the wait the server asked for (429s).
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	s := strconv.Itoa(e.Status)
	if e.SubStatus != 0 {
		s += "/" + strconv.Itoa(e.SubStatus)
	}
	if e.Code != "" {
		s += " " + e.Code
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// StatusOf is the status of err if it is an *Error, else 0.
func StatusOf(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

// Path is the URL path of a resource link: each segment escaped, with a leading slash.
func Path(link string) string {
	if link == "" {
		return "/"
	}
	segs := strings.Split(link, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return "/" + strings.Join(segs, "/")
}

// Do sends r, retrying it while the server throttles it, as far as the options allow.
func (c *Client) Do(ctx context.Context, r Request) (*Response, error) {
	path := r.Path
	if path == "" {
		path = Path(r.Link)
		if r.Feed {
			path = strings.TrimSuffix(path, "/") + "/" + r.Type
		}
	}
	var waited time.Duration
	for throttled := 0; ; throttled++ {
		resp, err := c.once(ctx, r, path)
		var e *Error
		if !errors.As(err, &e) || e.Status != http.StatusTooManyRequests ||
			c.opts.MaxThrottleRetries < 0 || throttled >= c.opts.MaxThrottleRetries || waited >= c.opts.MaxThrottleWait {
			if resp != nil {
				resp.Throttled = throttled
			}
			return resp, err
		}
		wait := e.RetryAfter
		if wait <= 0 {
			wait = 100 * time.Millisecond
		}
		if c.opts.OnThrottle != nil {
			c.opts.OnThrottle(wait)
		}
		waited += wait
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// once sends r one time.
func (c *Client) once(ctx context.Context, r Request, path string) (*Response, error) {
	var body io.Reader
	if r.Body != nil {
		body = bytes.NewReader(r.Body)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, c.base+path, body)
	if err != nil {
		return nil, err
	}
	for k, vs := range r.Header {
		req.Header[k] = vs
	}
	date := time.Now().UTC().Format(http.TimeFormat)
	req.Header.Set("x-ms-date", date)
	req.Header.Set("x-ms-version", "2018-12-31")
	req.Header.Set("Authorization", c.key.Authorization(r.Method, r.Type, r.Link, date))
	if r.Body != nil && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	charge, _ := strconv.ParseFloat(resp.Header.Get("x-ms-request-charge"), 64)
	if resp.StatusCode < 300 || resp.StatusCode == http.StatusNotModified {
		return &Response{Status: resp.StatusCode, Header: resp.Header, Body: data, Charge: charge}, nil
	}
	return nil, errorOf(resp, data)
}
