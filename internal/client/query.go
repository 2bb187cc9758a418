package client

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
)

// Query is a SQL query with its parameters, as the query body carries them.
type Query struct {
	SQL    string
	Params []Param
}

// Param is one @name of a query and its value, JSON.
type Param struct {
	Name  string          `json:"name"`
	Value json.RawMessage `json:"value"`
}

// Page is one page of query results.
type Page struct {
	Items  []json.RawMessage
	Charge float64
	// Throttled counts the 429s retried before this page came.
	Throttled int
	// Metrics is the server's x-ms-documentdb-query-metrics for the page.
	Metrics string
}

// QueryOptions shapes how a query is paged.
type QueryOptions struct {
	// PageSize is x-ms-max-item-count: how many items one page holds at most; zero leaves
	// it to the server.
	PageSize int
	// PartitionKey, a JSON array, scopes the query to one logical partition; otherwise the
	// query fans out over the container (x-ms-documentdb-query-enablecrosspartition).
	PartitionKey string
}

// Query runs q over the container at link, calling page for each page of results in turn
// and following the server's continuations until there are none or page returns an error
// (ErrStop ends the query without error).
func (c *Client) Query(ctx context.Context, link string, q Query, o QueryOptions, page func(Page) error) error {
	params := q.Params
	if params == nil {
		params = []Param{}
	}
	body, err := json.Marshal(struct {
		Query      string  `json:"query"`
		Parameters []Param `json:"parameters"`
	}{q.SQL, params})
	if err != nil {
		return err
	}
	continuation := ""
	for {
		h := http.Header{}
		h.Set("Content-Type", "application/query+json")
		h.Set("x-ms-documentdb-isquery", "true")
		if o.PartitionKey != "" {
			h.Set("x-ms-documentdb-partitionkey", o.PartitionKey)
		} else {
			h.Set("x-ms-documentdb-query-enablecrosspartition", "true")
		}
		if o.PageSize > 0 {
			h.Set("x-ms-max-item-count", strconv.Itoa(o.PageSize))
		}
		if continuation != "" {
			h.Set("x-ms-continuation", continuation)
		}
		resp, err := c.Do(ctx, Request{Method: http.MethodPost, Type: "docs", Link: link, Feed: true, Header: h, Body: body})
		if err != nil {
			return err
		}
		var list struct {
			Documents []json.RawMessage `json:"Documents"`
		}
		if err := json.Unmarshal(resp.Body, &list); err != nil {
			return &Error{Status: resp.Status, Code: "BadResponse", Message: "the query answer is not a document list: " + err.Error()}
		}
		err = page(Page{Items: list.Documents, Charge: resp.Charge, Throttled: resp.Throttled,
			Metrics: resp.Header.Get("x-ms-documentdb-query-metrics")})
		if err == ErrStop {
			return nil
		}
		if err != nil {
			return err
		}
		continuation = resp.Header.Get("x-ms-continuation")
		if continuation == "" {
			return nil
		}
	}
}
