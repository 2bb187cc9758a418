package cosmos

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/partita-db/partita/internal/engine"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/ru"
)

// The change feed is a read feed (GET .../docs) with A-IM set:
//
//	A-IM: Incremental Feed       the latest version of each changed item, with _lsn
//	A-IM: Full-Fidelity Feed     every change, deletes included, as {current, previous, metadata}
//	If-None-Match                absent: from the beginning; "*": from now; else the etag of the
//	                             previous page (the LSN it read through, quoted)
//	If-Modified-Since            from a point in time (HTTP date; the Go SDK writes UTC for GMT)
//
// The all-versions feed starts from now or from a previous page's etag only, as the service's.
//	x-ms-max-item-count          changes per page
//
// The scope is that of the read feed: a partition key range, a logical partition or an EPK
// range, within one physical partition. The answer is 304 with the etag when nothing is new.

// changeFeed answers a change feed request.
func (c *call) changeFeed(aim string) error {
	var q engine.FeedQuery
	switch strings.ToLower(strings.TrimSpace(aim)) {
	case "incremental feed":
	case "full-fidelity feed":
		q.AllVersions = true
	default:
		return fault.New(fault.BadRequest, "A-IM must be \"Incremental Feed\" or \"Full-Fidelity Feed\", not %q", aim)
	}
	ct, err := c.container()
	if err != nil {
		return err
	}
	if q.Max, err = c.maxItemCount(); err != nil {
		return err
	}
	if q.Start, err = feedStart(c.r.Header); err != nil {
		return err
	}
	if q.AllVersions && !q.Start.Now && !q.Start.HasAfter {
		// The service serves this mode from now or from a continuation only: the versions it
		// keeps do not reach back to the beginning (docs/change-feed.md).
		if !q.Start.Since.IsZero() {
			return fault.New(fault.BadRequest, "Start from a point in time is not supported with 'All Versions and Deletes' mode.")
		}
		return fault.New(fault.BadRequest, "Start from beginning is not supported with 'All Versions and Deletes' mode.")
	}
	if q.Range, err = c.scope(ct); err != nil {
		return err
	}
	q.Consistency, q.Priority = c.readConsistency(), ru.PriorityOf(c.ctx)
	page, err := ct.ChangeFeed(q)
	c.charge = page.Charge
	if err != nil {
		return err
	}
	h := c.w.Header()
	h["etag"] = []string{quoted(strconv.FormatUint(page.Through, 10))}
	h["x-ms-session-token"] = []string{c.sessionToken(page.Partition, page.LSN)}
	h["x-ms-content-path"] = []string{ct.RID()}
	h["x-ms-item-count"] = []string{strconv.Itoa(len(page.Changes))}
	if len(page.Changes) == 0 {
		c.reply(http.StatusNotModified, nil)
		return nil
	}
	docs := make([][]byte, len(page.Changes))
	for i, ch := range page.Changes {
		if q.AllVersions {
			docs[i] = versionRecord(ch, ct.PartitionKeyPaths())
		} else {
			docs[i] = withLSN(ch.JSON, ch.LSN)
		}
	}
	c.reply(http.StatusOK, documentList(ct.RID(), docs))
	return nil
}

// feedStart reads where a change feed page starts from its conditional headers.
func feedStart(h http.Header) (engine.FeedStart, error) {
	var s engine.FeedStart
	switch inm := h.Get("If-None-Match"); inm {
	case "":
	case "*":
		s.Now = true
	default:
		lsn, err := strconv.ParseUint(unquoted(inm), 10, 64)
		if err != nil {
			return s, fault.New(fault.BadRequest, "If-None-Match must be \"*\" or the etag of a previous change feed page, not %q", inm)
		}
		s.After, s.HasAfter = lsn, true
	}
	if ims := h.Get("If-Modified-Since"); ims != "" && !s.HasAfter && !s.Now {
		t, err := http.ParseTime(ims)
		if err != nil {
			if t, err = time.Parse(time.RFC1123, ims); err != nil {
				return s, fault.New(fault.BadRequest, "If-Modified-Since must be an HTTP date, not %q", ims)
			}
		}
		s.Since = t
	}
	return s, nil
}

// withLSN adds "_lsn" to an item's JSON object, as the latest-version feed shows it.
func withLSN(item []byte, lsn uint64) []byte {
	end := bytes.LastIndexByte(item, '}')
	if end < 0 {
		return item
	}
	out := make([]byte, 0, len(item)+28)
	out = append(out, item[:end]...)
	if bytes.ContainsAny(item[1:end], "\"") { // not an empty object
		out = append(out, ',')
	}
	out = append(out, `"_lsn":`...)
	out = strconv.AppendUint(out, lsn, 10)
	return append(out, item[end:]...)
}

// versionRecord renders a change as the all-versions-and-deletes feed does:
// {"current": item, "metadata": {...}, "previous": item}. A delete's metadata names the item:
// its id and, when its deleted version was kept, its partition key by path.
func versionRecord(ch engine.FeedChange, paths []string) []byte {
	var b bytes.Buffer
	b.WriteString(`{"current":`)
	if ch.JSON != nil {
		b.Write(ch.JSON)
	} else {
		b.WriteString(`{}`)
	}
	b.WriteString(`,"metadata":{"operationType":"`)
	b.WriteString(ch.Op.String())
	b.WriteString(`","lsn":`)
	b.WriteString(strconv.FormatUint(ch.LSN, 10))
	b.WriteString(`,"crts":`)
	b.WriteString(strconv.FormatInt(ch.TS, 10))
	if ch.PrevLSN != 0 {
		b.WriteString(`,"previousImageLSN":`)
		b.WriteString(strconv.FormatUint(ch.PrevLSN, 10))
	}
	b.WriteString(`,"timeToLiveExpired":`)
	b.WriteString(strconv.FormatBool(ch.Expired))
	if ch.Op == engine.ChangeDelete {
		id, _ := json.Marshal(ch.ID)
		b.WriteString(`,"id":`)
		b.Write(id)
		if len(ch.Key) > 0 {
			pk := map[string]any{}
			for i, v := range ch.Key {
				if i < len(paths) && v.Kind != epk.KindUndefined {
					pk[strings.TrimPrefix(paths[i], "/")] = keyValue(v)
				}
			}
			j, _ := json.Marshal(pk)
			b.WriteString(`,"partitionKey":`)
			b.Write(j)
		}
	}
	b.WriteByte('}')
	if ch.Prev != nil {
		b.WriteString(`,"previous":`)
		b.Write(ch.Prev)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// keyValue is a partition key component as JSON sees it.
func keyValue(v epk.Value) any {
	switch v.Kind {
	case epk.KindString:
		return v.Str
	case epk.KindNumber:
		return v.Num
	case epk.KindTrue:
		return true
	case epk.KindFalse:
		return false
	}
	return nil
}
