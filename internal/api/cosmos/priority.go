package cosmos

import (
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/ru"
)

// checkPriority reads the request's priority level (x-ms-cosmos-priority-level: Low or High,
// the SDKs' priorityLevel option; the account's default when absent) into its context, where
// the engine admits the request by it (ru.Budget), and refuses any other level.
func (c *call) checkPriority() error {
	p := c.h.priority
	if h := c.r.Header.Get("X-Ms-Cosmos-Priority-Level"); h != "" {
		var ok bool
		if p, ok = ru.ParsePriority(h); !ok {
			return fault.New(fault.BadRequest, "x-ms-cosmos-priority-level must be Low or High, not %q", h)
		}
	}
	if p != ru.High {
		c.ctx = ru.WithPriority(c.ctx, p)
	}
	return nil
}
