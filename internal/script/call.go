package script

import (
	"strings"
	"time"

	"github.com/dop251/goja"

	"github.com/partita-db/partita/internal/fault"
)

// call is the state of one execution: what the script may reach and what it has done.
type call struct {
	limits Limits
	began  time.Time
	coll   Collection // nil for user-defined functions, which may not reach data
	req    message
	resp   message
	// pending are the callbacks of finished operations, run in order after the function
	// that asked for them returns.
	pending []func() error
	ops     int
	// fatal ends the call whatever the script does next (a write outside the partition).
	fatal error
	// opErrors are the error objects handed to callbacks, so that one the script throws on
	// keeps its kind (a conflict stays a conflict).
	opErrors map[*goja.Object]*fault.Error
	logging  bool
	log      strings.Builder
}

// message is the request or the response a script sees: a body and headers.
type message struct {
	body    goja.Value // nil until set or read
	json    []byte     // the body as given by the caller, parsed on first read
	headers map[string]string
	set     bool // the script called setBody
	// operation names the operation a trigger runs around (getOperationType); "" otherwise.
	operation string
}

// accept reports whether the call may start one more operation: false once it has made its
// quota of operations or used three quarters of its time, so that a script stops in time
// and reports how far it got.
func (c *call) accept() bool {
	if c.ops >= c.limits.MaxOperations || time.Since(c.began) >= c.limits.Timeout*3/4 {
		return false
	}
	c.ops++
	return true
}

// later queues a callback.
func (c *call) later(f func() error) { c.pending = append(c.pending, f) }

// drain runs the queued callbacks, and those they queue, in order.
func (c *call) drain() error {
	for len(c.pending) > 0 {
		f := c.pending[0]
		c.pending = c.pending[1:]
		if err := f(); err != nil {
			return err
		}
		if c.fatal != nil {
			return c.fatal
		}
	}
	return nil
}

// logLine appends one console line, up to the cap.
func (c *call) logLine(s string) {
	if !c.logging {
		return
	}
	if room := c.limits.MaxLogBytes - c.log.Len(); room > 0 {
		if len(s)+1 > room {
			s = s[:max(room-1, 0)]
		}
		if c.log.Len() > 0 {
			c.log.WriteByte('\n')
		}
		c.log.WriteString(s)
	}
}
