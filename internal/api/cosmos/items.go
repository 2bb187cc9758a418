package cosmos

import (
	"net/http"
	"strings"
	"sync"

	"github.com/partita-db/partita/internal/engine"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
)

func (c *call) container() (*engine.Container, error) {
	return c.h.engine.Container(c.res.segs[1], c.res.segs[3])
}

// itemRequest reads what every item operation starts with: its container, its options and,
// when withBody, its body.
func (c *call) itemRequest(withBody bool) (ct *engine.Container, o engine.ItemOptions, body []byte, err error) {
	if ct, err = c.container(); err != nil {
		return
	}
	if o, err = c.itemOptions(ct); err != nil {
		return
	}
	if withBody {
		body, err = c.body()
	}
	return
}

// itemOptions reads the partition key, If-Match, indexing directive and trigger headers.
// Every item operation on a partitioned container names its partition key, as Cosmos
// requires; on writes it must match the body's.
func (c *call) itemOptions(ct *engine.Container) (engine.ItemOptions, error) {
	o := engine.ItemOptions{Context: c.ctx}
	key, err := c.partitionKey(ct)
	if err != nil {
		return o, err
	}
	o.PartitionKey = key
	o.IfMatch = c.ifMatch()
	if o.IndexingDirective, err = engine.ParseIndexingDirective(c.r.Header.Get("X-Ms-Indexing-Directive")); err != nil {
		return o, err
	}
	if o.PreTriggers, err = c.triggerNames("X-Ms-Documentdb-Pre-Trigger-Include"); err != nil {
		return o, err
	}
	if o.PostTriggers, err = c.triggerNames("X-Ms-Documentdb-Post-Trigger-Include"); err != nil {
		return o, err
	}
	if len(o.PreTriggers)+len(o.PostTriggers) > 0 {
		o.Headers = c.scriptHeaders()
	}
	return o, nil
}

// scriptHeaders are the request's headers as scripts read them (getRequest().getValue), by
// lower-case name; the signature stays out.
func (c *call) scriptHeaders() map[string]string {
	out := make(map[string]string, len(c.r.Header))
	for k, vs := range c.r.Header {
		if k = strings.ToLower(k); k != "authorization" && len(vs) > 0 {
			out[k] = vs[0]
		}
	}
	return out
}

// partitionKey reads the partition key header, which operations on one logical partition (on
// items, or running a stored procedure) of ct must send, unless ct has the system key: a
// client of a non-partitioned container (an SDK up to 2.x, Python's 3.x) names none, which is
// the logical partition of the items without a key.
func (c *call) partitionKey(ct *engine.Container) (epk.Key, error) {
	h := c.r.Header.Get("X-Ms-Documentdb-Partitionkey")
	if h == "" && ct.Def().SystemKey {
		return epk.Key{}, nil
	}
	if h == "" {
		return nil, fault.New(fault.BadRequest, "The partition key header x-ms-documentdb-partitionkey is required for operations on items of a partitioned container and for running its stored procedures")
	}
	return parsePartitionKey(h)
}

// triggerNames reads a trigger include header. The SDKs join several names with commas; Cosmos
// runs at most one pre-trigger and one post-trigger per operation, so more is refused.
func (c *call) triggerNames(header string) ([]string, error) {
	h := strings.TrimSpace(c.r.Header.Get(header))
	if h == "" {
		return nil, nil
	}
	names := strings.Split(h, ",")
	if len(names) > 1 {
		return nil, fault.New(fault.BadRequest, "%s names %d triggers (%q); only one trigger of each type is permitted per operation", strings.ToLower(header), len(names), h)
	}
	return []string{h}, nil
}

// itemReply writes the outcome of an item operation with its headers.
func (c *call) itemReply(ct *engine.Container, code int, r engine.ItemResult, withBody bool) {
	if r.ETag != "" {
		c.set("etag", quoted(r.ETag))
	}
	c.set("x-ms-session-token", c.sessionToken(r.PartitionID, r.LSN))
	c.setLSNs(r.LSN, r.ItemLSN)
	c.set("x-ms-content-path", ct.RID())
	c.setQuota(ct.Usage())
	if !withBody || preferMinimal(c.r) {
		c.reply(code, nil)
		return
	}
	c.reply(code, r.Doc)
}

func (c *call) createItem() error {
	ct, o, body, err := c.itemRequest(true)
	if err != nil {
		return err
	}
	var r engine.ItemResult
	if isTrue(c.r.Header.Get("X-Ms-Documentdb-Is-Upsert")) {
		r, err = ct.UpsertItem(body, o)
	} else {
		r, err = ct.CreateItem(body, o)
	}
	c.charge = r.Charge
	if err != nil {
		return err
	}
	code := http.StatusOK
	if r.Created {
		code = http.StatusCreated
	}
	c.itemReply(ct, code, r, true)
	return nil
}

// docBuffers hold point reads' bodies from storage until they are written to the client, so
// that a read does not leave a copy of its item behind as garbage.
var docBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

func putDocBuffer(b *[]byte) {
	if cap(*b) <= 64<<10 { // an occasional 2 MB item should not stay pinned in the pool
		docBuffers.Put(b)
	}
}

func (c *call) readItem() error {
	ct, o, _, err := c.itemRequest(false)
	if err != nil {
		return err
	}
	buf := docBuffers.Get().(*[]byte)
	defer putDocBuffer(buf)
	r, err := ct.ReadItemAt(c.ctx, (*buf)[:0], o.PartitionKey, c.res.segs[5], c.readConsistency())
	if r.Doc != nil {
		*buf = r.Doc
	}
	c.charge = r.Charge
	if err != nil {
		return err
	}
	if inm := c.r.Header.Get("If-None-Match"); inm != "" && unquoted(inm) == r.ETag {
		c.w.Header()["etag"] = []string{quoted(r.ETag)}
		c.reply(http.StatusNotModified, nil)
		return nil
	}
	c.itemReply(ct, http.StatusOK, r, true)
	return nil
}

func (c *call) replaceItem() error {
	ct, o, body, err := c.itemRequest(true)
	if err != nil {
		return err
	}
	r, err := ct.ReplaceItem(c.res.segs[5], body, o)
	c.charge = r.Charge
	if err != nil {
		return err
	}
	c.itemReply(ct, http.StatusOK, r, true)
	return nil
}

func (c *call) deleteItem() error {
	ct, o, _, err := c.itemRequest(false)
	if err != nil {
		return err
	}
	r, err := ct.DeleteItem(o.PartitionKey, c.res.segs[5], o)
	c.charge = r.Charge
	if err != nil {
		return err
	}
	c.itemReply(ct, http.StatusNoContent, r, false)
	return nil
}
