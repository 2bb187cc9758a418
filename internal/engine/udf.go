package engine

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/value"
)

// udfs is how a query over the container calls its user-defined functions, as they are when
// the query starts; nil when the container has none. The functions are looked up and
// compiled once per query, and may be called from the query's parallel readers at once.
//
// Besides each call's own limit, the calls of one query share one time budget, the script
// timeout: a query holds the container's split lock shared while it runs, and slow UDFs over
// many rows must not hold off a split (and the requests queued behind it) for long.
func (c *Container) udfs() func(name string, args []value.Value) (value.Value, error) {
	set := c.scripts.Load()
	if len(set.list[FunctionScript]) == 0 {
		return nil
	}
	var fns sync.Map // name -> func([]value.Value) (value.Value, error)
	var spent atomic.Int64
	budget := c.e.scripts.Limits().Timeout
	return func(name string, args []value.Value) (value.Value, error) {
		if time.Duration(spent.Load()) > budget {
			return value.Undef(), fault.New(fault.Timeout, "The query's user-defined functions ran past their time limit of %v in all; narrow the query or make the functions cheaper", budget)
		}
		began := time.Now()
		defer func() { spent.Add(int64(time.Since(began))) }()
		f, ok := fns.Load(name)
		if !ok {
			s, ok := set.byID[FunctionScript][name]
			if !ok {
				return value.Undef(), fault.New(fault.BadRequest, "User-defined function udf.%s does not exist in this container", name)
			}
			fn, err := c.e.scripts.Function(s.Body)
			if err != nil {
				return value.Undef(), err
			}
			f, _ = fns.LoadOrStore(name, fn)
		}
		return f.(func([]value.Value) (value.Value, error))(args)
	}
}
