package engine

import (
	"slices"

	"github.com/partita-db/partita/internal/document"
	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/ru"
	"github.com/partita-db/partita/internal/script"
)

// triggerMatches are the trigger operations that fire on each kind of write.
var triggerMatches = map[OpKind][]string{
	OpCreate:  {"All", "Create"},
	OpReplace: {"All", "Replace", "Update"},
	OpUpsert:  {"All", "Create", "Replace", "Update"},
	OpDelete:  {"All", "Delete"},
}

// requestTriggers finds the triggers a request names, checking that each is of its type
// and fires on the operation.
func (c *Container) requestTriggers(o ItemOptions, kind OpKind) (pre, post *Script, err error) {
	find := func(names []string, typ string) (*Script, error) {
		if len(names) == 0 {
			return nil, nil
		}
		if len(names) > 1 {
			return nil, fault.New(fault.BadRequest, "A request may name one %s-trigger; it names %d", typ, len(names))
		}
		s, err := c.script(TriggerScript, names[0])
		switch {
		case err != nil:
			return nil, err
		case s.TriggerType != typ:
			return nil, fault.New(fault.BadRequest, "The trigger %q is a %s-trigger; it cannot run as a %s-trigger", s.ID, s.TriggerType, typ)
		case !slices.Contains(triggerMatches[kind], s.TriggerOperation):
			return nil, fault.New(fault.BadRequest, "The trigger %q fires on %s operations, not on this %s", s.ID, s.TriggerOperation, kind)
		}
		return &s, nil
	}
	if pre, err = find(o.PreTriggers, "Pre"); err == nil {
		post, err = find(o.PostTriggers, "Post")
	}
	return pre, post, err
}

// triggered runs a write with its triggers, all in one transaction over the item's logical
// partition: the pre-trigger may change the incoming item, the post-trigger sees the stored
// one and may write more, and a throw from either leaves nothing written. write is the
// operation itself, on the transaction, given the item as the pre-trigger left it; it
// returns the id it wrote and the stored JSON for the post-trigger.
func (c *Container) triggered(kind OpKind, e epk.EPK, incoming []byte, o ItemOptions,
	write func(t *txn, body []byte) (id string, stored []byte, err error)) (ItemResult, error) {
	pre, post, err := c.requestTriggers(o, kind)
	if err != nil {
		return ItemResult{Charge: ru.Miss()}, err
	}
	var id string
	x, charge, err := c.transact(o.ctx(), e, func(t *txn) error {
		body := incoming
		if pre != nil {
			out, err := c.e.scripts.Trigger(pre.Body, script.TriggerCall{Operation: string(kind), Request: body, Headers: o.Headers}, t)
			if err != nil {
				return err
			}
			if out.Request != nil {
				body = out.Request
			}
		}
		var stored []byte
		var err error
		if id, stored, err = write(t, body); err != nil || post == nil {
			return err
		}
		_, err = c.e.scripts.Trigger(post.Body, script.TriggerCall{Operation: string(kind), Request: body, Response: stored, Headers: o.Headers}, t)
		return err
	})
	out := ItemResult{Charge: charge}
	if x.p != nil {
		out.PartitionID, out.LSN = x.p.ID(), x.p.Stats().LSN
	}
	if err != nil {
		return out, err
	}
	if r, ok := x.byID[id]; ok {
		out.Created, out.LSN = r.Created, r.Doc.LSN
		if kind != OpDelete {
			out.Doc, out.ETag = r.Doc.JSON, r.Doc.ETag()
		}
	}
	return out, nil
}

// writeTriggered is WriteItem for a request that names triggers.
func (c *Container) writeTriggered(kind OpKind, id string, src document.Source, o ItemOptions) (ItemResult, error) {
	_, e, err := c.parse(src, o.PartitionKey)
	if err != nil {
		return ItemResult{Charge: ru.Miss()}, err
	}
	wo := script.WriteOptions{IfMatch: o.IfMatch}
	return c.triggered(kind, e, src.JSON(), o, func(t *txn, body []byte) (string, []byte, error) {
		item, err := t.parse(body)
		if err != nil {
			return "", nil, err
		}
		var stored []byte
		switch kind {
		case OpCreate:
			stored, err = t.Create(body, wo)
		case OpUpsert:
			stored, err = t.Upsert(body, wo)
		default:
			stored, err = t.Replace(script.DocRef{ID: id}, body, wo)
		}
		return item.ID, stored, err
	})
}

// deleteTriggered is DeleteItem for a request that names triggers. The post-trigger sees the
// deleted item as the response body.
func (c *Container) deleteTriggered(e epk.EPK, id string, o ItemOptions) (ItemResult, error) {
	return c.triggered(OpDelete, e, nil, o, func(t *txn, _ []byte) (string, []byte, error) {
		cur, err := t.Read(script.DocRef{ID: id}, script.WriteOptions{})
		if err == nil {
			err = t.Delete(script.DocRef{ID: id}, script.WriteOptions{IfMatch: o.IfMatch})
		}
		return id, cur, err
	})
}
