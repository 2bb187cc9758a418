package cosmos

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strconv"

	"github.com/partita-db/partita/internal/engine"
	"github.com/partita-db/partita/internal/fault"
)

// quoted and unquoted convert between engine etags and HTTP etag headers.
func quoted(etag string) string { return `"` + etag + `"` }

func unquoted(h string) string {
	if len(h) >= 2 && h[0] == '"' && h[len(h)-1] == '"' {
		return h[1 : len(h)-1]
	}
	return h
}

// isTrue reports whether a header says true as strconv.ParseBool would, without the error
// value ParseBool allocates for the usual absent header.
func isTrue(v string) bool {
	switch v {
	case "1", "t", "T", "true", "TRUE", "True":
		return true
	}
	return false
}

func preferMinimal(r *http.Request) bool { return r.Header.Get("Prefer") == "return=minimal" }

// setLSNs writes the LSN headers of a point operation's response, as the service's replicas
// send them: the partition's LSN the operation saw (lsn), which a quorum of its replicas has
// (every LSN a replica applied is committed), and the item version's; the global committed
// LSN is -1, as on a single-region account, which tracks none.
func (c *call) setLSNs(lsn, item uint64) {
	n := strconv.FormatUint(lsn, 10)
	c.set("lsn", n)
	c.set("x-ms-quorum-acked-lsn", n)
	if item > 0 {
		c.set("x-ms-item-lsn", strconv.FormatUint(item, 10))
	}
	c.set("x-ms-global-committed-lsn", "-1")
	c.set("x-ms-number-of-read-regions", "0")
}

// setQuota writes the resource quota and usage headers of a container, in KB as Cosmos
// reports them.
func (c *call) setQuota(u engine.Usage) {
	var buf [128]byte
	c.set("x-ms-resource-quota", engine.ResourceQuota)
	c.set("x-ms-resource-usage", string(engine.AppendUsage(buf[:0], u)))
}

// maxItemCount reads x-ms-max-item-count: absent or -1 lets the server choose.
func (c *call) maxItemCount() (int, error) {
	h := c.r.Header.Get("X-Ms-Max-Item-Count")
	if h == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(h)
	if err != nil || n == 0 || n < -1 {
		return 0, fault.New(fault.BadRequest, "x-ms-max-item-count must be a positive number or -1, not %q", h)
	}
	if n == -1 {
		return 0, nil
	}
	return n, nil
}

func newActivityID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
