package cosmos

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/partita-db/partita/internal/engine"
	"github.com/partita-db/partita/internal/status"
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
	if o, err = c.itemOptions(); err != nil {
		return
	}
	if withBody {
		body, err = c.body()
	}
	return
}

// itemOptions reads the partition key and If-Match headers. Every item operation on a
// partitioned container names its partition key, as Cosmos requires; on writes it must match
// the body's.
func (c *call) itemOptions() (engine.ItemOptions, error) {
	var o engine.ItemOptions
	h := c.r.Header.Get("x-ms-documentdb-partitionkey")
	if h == "" {
		return o, status.BadRequest("The partition key header x-ms-documentdb-partitionkey is required for operations on items of a partitioned container")
	}
	key, err := parsePartitionKey(h)
	if err != nil {
		return o, err
	}
	o.PartitionKey = key
	o.IfMatch = unquoted(c.r.Header.Get("If-Match"))
	return o, nil
}

// itemReply writes the outcome of an item operation with its headers.
func (c *call) itemReply(ct *engine.Container, code int, r engine.ItemResult, withBody bool) {
	hdr := c.w.Header()
	if r.ETag != "" {
		hdr["Etag"] = []string{quoted(r.ETag)}
	}
	hdr["X-Ms-Session-Token"] = []string{sessionToken(r.PartitionID, r.LSN)}
	hdr["Lsn"] = []string{strconv.FormatUint(r.LSN, 10)}
	hdr["X-Ms-Content-Path"] = []string{ct.RID()}
	setQuota(hdr, ct.Usage())
	if !withBody || preferMinimal(c.r) {
		c.reply(code, nil)
		return
	}
	c.reply(code, r.Doc)
}

// sessionTokens joins the tokens of the partitions a feed or query page read.
func sessionTokens(partitions map[uint32]uint64) string {
	tokens := make([]string, 0, len(partitions))
	for id, lsn := range partitions {
		tokens = append(tokens, sessionToken(id, lsn))
	}
	return strings.Join(tokens, ",")
}

func sessionToken(partition uint32, lsn uint64) string {
	return strconv.FormatUint(uint64(partition), 10) + ":-1#" + strconv.FormatUint(lsn, 10)
}

func preferMinimal(r *http.Request) bool { return r.Header.Get("Prefer") == "return=minimal" }

func (c *call) createItem() error {
	ct, o, body, err := c.itemRequest(true)
	if err != nil {
		return err
	}
	var r engine.ItemResult
	if isTrue(c.r.Header.Get("x-ms-documentdb-is-upsert")) {
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

func (c *call) readItem() error {
	ct, o, _, err := c.itemRequest(false)
	if err != nil {
		return err
	}
	r, err := ct.ReadItem(o.PartitionKey, c.res.segs[5])
	c.charge = r.Charge
	if err != nil {
		return err
	}
	if inm := c.r.Header.Get("If-None-Match"); inm != "" && unquoted(inm) == r.ETag {
		c.w.Header()["Etag"] = []string{quoted(r.ETag)}
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

// setQuota writes the resource quota and usage headers of a container, in KB as Cosmos
// reports them.
func setQuota(hdr http.Header, u engine.Usage) {
	kb := strconv.FormatInt((u.Bytes+1023)/1024, 10)
	hdr["X-Ms-Resource-Quota"] = []string{"documentSize=2048;documentsSize=-1;documentsCount=-1;collectionSize=-1;"}
	hdr["X-Ms-Resource-Usage"] = []string{"documentSize=" + kb + ";documentsSize=" + kb + ";documentsCount=" + strconv.FormatInt(u.Items, 10) + ";collectionSize=" + kb + ";"}
}
