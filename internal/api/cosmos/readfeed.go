package cosmos

import (
	"bytes"
	"net/http"
	"strconv"
)

// readFeed answers GET .../docs: the items of the container (or of the scope the headers
// name, see scope), a page at a time.
func (c *call) readFeed() error {
	if aim := c.r.Header.Get("A-IM"); aim != "" {
		return c.changeFeed(aim)
	}
	ct, err := c.container()
	if err != nil {
		return err
	}
	max, err := c.maxItemCount()
	if err != nil {
		return err
	}
	r, err := c.scope(ct)
	if err != nil {
		return err
	}
	page, err := ct.ReadFeedAt(c.ctx, c.readConsistency(), r, c.r.Header.Get("X-Ms-Continuation"), max)
	c.charge = page.Charge
	if err != nil {
		return err
	}
	if page.Next != "" {
		c.w.Header()["x-ms-continuation"] = []string{page.Next}
	}
	c.w.Header()["x-ms-session-token"] = []string{c.sessionTokens(page.Partitions)}
	c.w.Header()["x-ms-content-path"] = []string{ct.RID()}
	c.w.Header()["x-ms-item-count"] = []string{strconv.Itoa(len(page.Docs))}
	c.reply(http.StatusOK, documentList(ct.RID(), page.Docs))
	return nil
}

// documentList renders {"_rid", "Documents": [...], "_count"} around raw item JSON.
func documentList(rid string, docs [][]byte) []byte {
	var b bytes.Buffer
	b.WriteString(`{"_rid":"`)
	b.WriteString(rid)
	b.WriteString(`","Documents":[`)
	for i, d := range docs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(d)
	}
	b.WriteString(`],"_count":`)
	b.WriteString(strconv.Itoa(len(docs)))
	b.WriteByte('}')
	return b.Bytes()
}
