package cosmos

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/engine"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/query"
)

// wireOp is one operation of a batch or bulk request as the SDKs send it.
type wireOp struct {
	OperationType string          `json:"operationType"`
	ID            string          `json:"id"`
	ResourceBody  json.RawMessage `json:"resourceBody"`
	IfMatch       string          `json:"ifMatch"`
	// PartitionKey is the operation's own key in bulk requests: a JSON array in a string.
	PartitionKey string `json:"partitionKey"`
}

// wireResult is one operation's outcome in the response.
type wireResult struct {
	StatusCode    int             `json:"statusCode"`
	SubStatusCode int             `json:"subStatusCode,omitempty"`
	RequestCharge float64         `json:"requestCharge"`
	ETag          string          `json:"eTag,omitempty"`
	ResourceBody  json.RawMessage `json:"resourceBody,omitempty"`
	Message       string          `json:"message,omitempty"`
	// RetryAfterMs is, for a throttled operation, how long until it may succeed: bulk answers
	// 200 as a whole, so the wait travels with each operation, where the SDKs read it.
	RetryAfterMs float64 `json:"retryAfterMilliseconds,omitempty"`
}

// batch answers a transactional batch (x-ms-cosmos-batch-atomic: true) or, otherwise, a bulk
// request whose operations stand alone.
func (c *call) batch() error {
	ct, err := c.container()
	if err != nil {
		return err
	}
	body, err := c.body()
	if err != nil {
		return err
	}
	var wire []wireOp
	if err := json.Unmarshal(body, &wire); err != nil {
		return fault.New(fault.BadRequest, "The batch body must be a JSON array of operations: %v", err)
	}
	atomic := isTrue(c.r.Header.Get("X-Ms-Cosmos-Batch-Atomic"))
	ops := make([]engine.BatchOp, len(wire))
	for i, w := range wire {
		if ops[i], err = toBatchOp(w, !atomic); err != nil {
			return fault.New(fault.BadRequest, "Operation %d: %s", i, fault.From(err).Message)
		}
	}
	var results []engine.OpResult
	failed := -1
	if atomic {
		o, err := c.itemOptions(ct)
		if err != nil {
			return err
		}
		if results, failed, err = ct.ExecuteBatch(c.ctx, o.PartitionKey, ops); err != nil {
			return err
		}
		c.w.Header()["x-ms-session-token"] = []string{c.sessionToken(ct.Session(o.PartitionKey))}
	} else {
		if len(ops) > engine.MaxBatchOperations {
			return fault.New(fault.BadRequest, "A bulk request has at most %d operations; got %d", engine.MaxBatchOperations, len(ops))
		}
		results = ct.ExecuteBulk(c.ctx, ops)
	}
	// As for single writes, Prefer: return=minimal leaves written items out of the answer;
	// a read's item is what it asked for, so it is always there.
	minimal := preferMinimal(c.r)
	out := make([]wireResult, len(results))
	for i, r := range results {
		out[i] = wireResult{StatusCode: opStatus(ops[i].Kind, r), RequestCharge: r.Charge, ResourceBody: r.Doc}
		if minimal && ops[i].Kind != engine.OpRead {
			out[i].ResourceBody = nil
		}
		if r.ETag != "" {
			out[i].ETag = quoted(r.ETag)
		}
		if r.Err != nil {
			w, e := toWire(r.Err)
			out[i].SubStatusCode, out[i].Message = w.substatus, e.Message
			if e.Kind == fault.Throttled {
				out[i].RetryAfterMs = float64(e.RetryAfter.Microseconds()) / 1000
			}
		}
		c.charge += r.Charge
	}
	code := http.StatusOK
	if failed >= 0 {
		code = http.StatusMultiStatus
	}
	c.w.Header()["x-ms-content-path"] = []string{ct.RID()}
	return c.replyJSON(code, out)
}

// opStatus is the HTTP status of one operation's outcome.
func opStatus(kind engine.OpKind, r engine.OpResult) int {
	switch {
	case r.Err != nil:
		w, _ := toWire(r.Err)
		return w.status
	case kind == engine.OpDelete:
		return http.StatusNoContent
	case r.Created:
		return http.StatusCreated
	}
	return http.StatusOK
}

func toBatchOp(w wireOp, bulk bool) (engine.BatchOp, error) {
	op := engine.BatchOp{Kind: engine.OpKind(w.OperationType), ID: w.ID, IfMatch: unquoted(w.IfMatch)}
	switch op.Kind {
	case engine.OpCreate, engine.OpUpsert, engine.OpReplace:
		if len(w.ResourceBody) == 0 {
			return op, fault.New(fault.BadRequest, "%s needs a resourceBody", op.Kind)
		}
		op.Item = document.FromJSON(w.ResourceBody)
	case engine.OpPatch:
		p, err := parsePatchBody(w.ResourceBody)
		if err != nil {
			return op, err
		}
		op.Patch = p
	case engine.OpRead, engine.OpDelete:
	default:
		return op, fault.New(fault.BadRequest, "Unknown operationType %q", w.OperationType)
	}
	if bulk && w.PartitionKey != "" {
		key, err := parsePartitionKey(w.PartitionKey)
		if err != nil {
			return op, err
		}
		op.PartitionKey = key
	}
	return op, nil
}

// parsePatchBody reads a patch: {"condition"?, "operations": [...]} or a bare array of
// operations. The condition is a filter such as "FROM c WHERE c.state = 'open'".
func parsePatchBody(b []byte) (engine.Patch, error) {
	var p engine.Patch
	if strings.HasPrefix(strings.TrimSpace(string(b)), "[") {
		if err := json.Unmarshal(b, &p.Ops); err != nil {
			return p, fault.New(fault.BadRequest, "The patch operations are not valid: %v", err)
		}
		return p, nil
	}
	var body struct {
		Condition  string             `json:"condition"`
		Operations []document.PatchOp `json:"operations"`
	}
	if err := json.Unmarshal(b, &body); err != nil {
		return p, fault.New(fault.BadRequest, "The patch body is not valid: %v", err)
	}
	p.Ops = body.Operations
	if body.Condition != "" {
		cond, err := query.PrepareCondition(body.Condition)
		if err != nil {
			return p, fault.New(fault.BadRequest, "The patch condition %q is not a valid filter such as \"FROM c WHERE c.x = 1\": %s",
				body.Condition, fault.From(err).Message)
		}
		p.Condition = cond
	}
	return p, nil
}

func (c *call) patchItem() error {
	ct, o, body, err := c.itemRequest(true)
	if err != nil {
		return err
	}
	p, err := parsePatchBody(body)
	if err != nil {
		return err
	}
	r, err := ct.PatchItem(o.PartitionKey, c.res.segs[5], p, o)
	c.charge = r.Charge
	if err != nil {
		return err
	}
	c.itemReply(ct, http.StatusOK, r, true)
	return nil
}
