package client

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// MaxBulkOperations is how many operations one bulk request may carry, as the service has it.
const MaxBulkOperations = 100

// BulkOp is one operation of a bulk request, as the SDKs send it.
type BulkOp struct {
	OperationType string          `json:"operationType"` // "Create", "Upsert", "Read", ...
	ID            string          `json:"id,omitempty"`
	PartitionKey  string          `json:"partitionKey,omitempty"` // a JSON array, in a string
	ResourceBody  json.RawMessage `json:"resourceBody,omitempty"`
}

// BulkResult is one operation's outcome.
type BulkResult struct {
	StatusCode    int             `json:"statusCode"`
	SubStatusCode int             `json:"subStatusCode"`
	RequestCharge float64         `json:"requestCharge"`
	Message       string          `json:"message"`
	ResourceBody  json.RawMessage `json:"resourceBody"`
	// RetryAfterMs is, for a throttled operation, the server's wait before retrying it.
	RetryAfterMs float64 `json:"retryAfterMilliseconds"`
}

// RetryAfter is the wait a throttled result asks for.
func (r BulkResult) RetryAfter() time.Duration {
	return time.Duration(r.RetryAfterMs * float64(time.Millisecond))
}

// Bulk sends ops, at most MaxBulkOperations of them, as one non-atomic bulk request to the
// container at link, addressed to the partition key range rangeID as the SDKs address it
// (empty: none named). The operations stand alone: each has its own result, in order, and a
// failed one (a 429 included) does not stop the others. The response's charge is the sum of
// the operations'.
func (c *Client) Bulk(ctx context.Context, link, rangeID string, ops []BulkOp) ([]BulkResult, *Response, error) {
	body, err := json.Marshal(ops)
	if err != nil {
		return nil, nil, err
	}
	h := http.Header{}
	h.Set("x-ms-cosmos-is-batch-request", "true")
	h.Set("x-ms-cosmos-batch-atomic", "false")
	h.Set("x-ms-cosmos-batch-continue-on-error", "true")
	if rangeID != "" {
		h.Set("x-ms-documentdb-partitionkeyrangeid", rangeID)
	}
	resp, err := c.Do(ctx, Request{Method: http.MethodPost, Type: "docs", Link: link, Feed: true, Header: h, Body: body})
	if err != nil {
		return nil, nil, err
	}
	var results []BulkResult
	if err := json.Unmarshal(resp.Body, &results); err != nil || len(results) != len(ops) {
		return nil, resp, &Error{Status: resp.Status, Code: "BadResponse", Message: "the bulk answer does not hold one result per operation"}
	}
	return results, resp, nil
}
