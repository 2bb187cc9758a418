package script

import (
	"encoding/json"
	"errors"
	"maps"

	"github.com/dop251/goja"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/value"
)

// Outcome is what a procedure or trigger call left besides its writes.
type Outcome struct {
	// Body is the response body the script set, as JSON; nil when it set none.
	Body []byte
	// Request is, for a pre-trigger that called setBody on the request, the document that
	// replaces the incoming one; nil otherwise.
	Request []byte
	// Log is what console.log collected, when logging was asked for.
	Log string
}

// ProcedureCall is what a stored procedure's call carries besides its arguments.
type ProcedureCall struct {
	Log bool // collect console.log (Outcome.Log)
	// Headers are the client's request headers by lower-case name, which the script reads
	// with getContext().getRequest().getValue(name).
	Headers map[string]string
}

// Procedure runs a stored procedure's body with args, a JSON array whose elements become the
// function's arguments, over coll.
func (r *Runner) Procedure(body string, args []byte, coll Collection, pc ProcedureCall) (Outcome, error) {
	if len(args) > r.limits.MaxInputBytes {
		return Outcome{}, fault.New(fault.TooLarge, "The arguments are %d bytes; the limit is %d", len(args), r.limits.MaxInputBytes)
	}
	// Checked here, not only by the front end: the runtime parses them natively, and JSON
	// deep enough would exhaust its stack.
	if len(args) > 0 && (!json.Valid(args) || nestsDeeper(string(args), maxNesting)) {
		return Outcome{}, fault.New(fault.BadRequest, "The arguments of a stored procedure must be a JSON array, nested at most %d deep", maxNesting)
	}
	c := &call{coll: coll, logging: pc.Log, req: message{json: args, headers: maps.Clone(pc.Headers)}}
	var out Outcome
	err := r.run(body, c, func(v *vm) (goja.Value, error) {
		list := []goja.Value{}
		if len(args) > 0 {
			val, err := v.parse(goja.Undefined(), v.rt.ToValue(string(args)))
			if ex := (*goja.Exception)(nil); errors.As(err, &ex) {
				// JSON the runtime reads otherwise than Go: a number past float64, as 1e400.
				return nil, fault.New(fault.BadRequest, "The arguments of a stored procedure cannot be read: %s", describe(ex))
			} else if err != nil {
				return nil, err
			}
			arr, ok := val.(*goja.Object)
			if !ok || arr.ClassName() != "Array" {
				return nil, fault.New(fault.BadRequest, "The arguments of a stored procedure must be a JSON array")
			}
			if err := v.rt.ExportTo(arr, &list); err != nil {
				return nil, fault.New(fault.BadRequest, "The arguments of a stored procedure must be a JSON array")
			}
		}
		return v.fn(goja.Undefined(), list...)
	}, func(v *vm) (err error) {
		out, err = c.outcome(v)
		return err
	})
	out.Log = c.log.String()
	return out, err
}

// TriggerCall is the operation a trigger runs around.
type TriggerCall struct {
	// Operation is the operation's name: "Create", "Replace", "Upsert" or "Delete".
	Operation string
	// Request is the incoming document (pre-triggers); Response the stored one (post-triggers).
	Request, Response []byte
	Log               bool
	// Headers are the client's request headers, as ProcedureCall.Headers.
	Headers map[string]string
}

// Trigger runs a trigger's body over coll. A pre-trigger may replace the incoming document
// (Outcome.Request); a post-trigger may write more; a throw from either fails the operation.
func (r *Runner) Trigger(body string, t TriggerCall, coll Collection) (Outcome, error) {
	c := &call{coll: coll, logging: t.Log, req: message{json: t.Request, operation: t.Operation, headers: maps.Clone(t.Headers)},
		resp: message{json: t.Response}}
	var out Outcome
	err := r.run(body, c, func(v *vm) (goja.Value, error) {
		return v.fn(goja.Undefined())
	}, func(v *vm) (err error) {
		out, err = c.outcome(v)
		return err
	})
	out.Log = c.log.String()
	return out, err
}

// outcome serializes what the script set.
func (c *call) outcome(v *vm) (Outcome, error) {
	var out Outcome
	if c.resp.set {
		if b, err := v.stringify(goja.Undefined(), c.resp.body); err != nil {
			return out, err
		} else if !goja.IsUndefined(b) {
			out.Body = []byte(b.String())
		}
		if len(out.Body) > c.limits.MaxOutputBytes {
			return out, fault.New(fault.TooLarge, "The script's response body is %d bytes; the limit is %d", len(out.Body), c.limits.MaxOutputBytes)
		}
	}
	if c.req.set {
		b, err := v.stringify(goja.Undefined(), c.req.body)
		if err != nil {
			return out, err
		}
		if goja.IsUndefined(b) {
			return out, fault.New(fault.BadRequest, "The trigger set a request body that is not a JSON value")
		}
		out.Request = []byte(b.String())
	}
	return out, nil
}

// Function returns a user-defined function's body as a Go function over query values. Each
// call borrows a runtime, so the function may be called from several goroutines at once.
func (r *Runner) Function(body string) (func(args []value.Value) (value.Value, error), error) {
	if _, err := r.compile(body); err != nil {
		return nil, err
	}
	once := func(args []value.Value) (value.Value, error) {
		var buf []byte
		var res value.Value
		err := r.run(body, &call{}, func(v *vm) (goja.Value, error) {
			vals := make([]goja.Value, len(args))
			for i, a := range args {
				if a.IsUndefined() {
					vals[i] = goja.Undefined()
					continue
				}
				buf = value.AppendJSON(buf[:0], a)
				val, err := v.parse(goja.Undefined(), v.rt.ToValue(string(buf)))
				if err != nil {
					return nil, err
				}
				vals[i] = val
			}
			ret, err := v.fn(goja.Undefined(), vals...)
			if err != nil {
				return nil, err
			}
			if goja.IsUndefined(ret) {
				res = value.Undef()
				return ret, nil
			}
			s, err := v.stringify(goja.Undefined(), ret)
			if err != nil || goja.IsUndefined(s) {
				res = value.Undef() // a function or symbol: undefined, as in a projection
				return ret, err
			}
			res, err = value.Parse([]byte(s.String()))
			return ret, err
		}, nil)
		return res, err
	}
	return func(args []value.Value) (res value.Value, err error) {
		if res, err = once(args); err == ErrMemoryBeside {
			// A function writes nothing: it runs again at once, away from other reruns.
			err = r.Alone(func() error {
				res, err = once(args)
				return err
			})
		}
		return res, err
	}, nil
}
