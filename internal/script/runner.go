package script

import (
	"errors"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/dop251/goja"

	"github.com/partita-db/partita/internal/fault"
)

// Limits bound every call. The zero value of a field means its default.
type Limits struct {
	// Timeout is the time a call may take, operations included (Cosmos: 5 s).
	Timeout time.Duration
	// MaxOperations is how many collection operations a call may make; past it, and past
	// three quarters of Timeout, operations are not accepted.
	MaxOperations int
	// MaxInputBytes caps the JSON of a call's arguments and of a trigger's document.
	MaxInputBytes int
	// MaxOutputBytes caps the response body a script sets.
	MaxOutputBytes int
	// MaxLogBytes caps what console.log collects; the rest is dropped.
	MaxLogBytes int
	// MaxMemory is how far the process's heap may grow during a call before the call is
	// interrupted.
	MaxMemory int64
	// MaxCallDepth bounds nested function calls (deep recursion ends the call).
	MaxCallDepth int
}

// Defaults of Limits.
const (
	DefaultTimeout        = 5 * time.Second
	DefaultMaxOperations  = 1000
	DefaultMaxInputBytes  = 2 << 20
	DefaultMaxOutputBytes = 2 << 20
	DefaultMaxLogBytes    = 16 << 10
	DefaultMaxMemory      = 256 << 20
	DefaultMaxCallDepth   = 1000
	// Caps of the built-ins that allocate in one step (guard.go), out of the scripts' reach.
	maxArrayLength  = 4 << 20
	maxStringLength = 32 << 20
	// maxNesting bounds how deep JSON nests in scripts (JSON.parse, JSON.stringify, the
	// arguments): as deep as a stored document may (package value's maxDepth).
	maxNesting = 512
	// maxCompiled bounds the compiled scripts kept; past it, one is forgotten at random.
	maxCompiled = 1024
)

func (l Limits) withDefaults() Limits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	if l.MaxMemory <= 0 {
		l.MaxMemory = DefaultMaxMemory
	}
	def(&l.MaxOperations, DefaultMaxOperations)
	def(&l.MaxInputBytes, DefaultMaxInputBytes)
	def(&l.MaxOutputBytes, DefaultMaxOutputBytes)
	def(&l.MaxLogBytes, DefaultMaxLogBytes)
	def(&l.MaxCallDepth, DefaultMaxCallDepth)
	return l
}

// Runner compiles and runs scripts. It is safe for concurrent use.
type Runner struct {
	limits Limits
	watch  *watchdog

	mu       sync.Mutex
	compiled map[string]*compiled // by body
	// aloneMu holds the calls run again after ErrMemoryBeside apart (Alone).
	aloneMu sync.Mutex
}

// NewRunner returns a Runner with the given limits.
func NewRunner(l Limits) *Runner {
	return &Runner{limits: l.withDefaults(), watch: newWatchdog(), compiled: map[string]*compiled{}}
}

// Limits returns the runner's limits, defaults filled in.
func (r *Runner) Limits() Limits { return r.limits }

// compiled is one script body, compiled once, with its idle runtimes.
type compiled struct {
	prog *goja.Program
	// idle holds prepared runtimes of this script only (*vm), ready for a call.
	idle sync.Pool
}

// Check compiles body, reporting a syntax error as Cosmos does when a script is registered.
func (r *Runner) Check(body string) error {
	_, err := r.compile(body)
	return err
}

// compile returns body compiled, from the cache when it was seen before.
func (r *Runner) compile(body string) (*compiled, error) {
	r.mu.Lock()
	c := r.compiled[body]
	r.mu.Unlock()
	if c != nil {
		return c, nil
	}
	// The body is a function; parentheses make it an expression whose value is the function.
	// The newline keeps a trailing line comment from swallowing the parenthesis.
	src := "(" + strings.TrimRight(strings.TrimSpace(body), "; \t\r\n") + "\n)"
	prog, err := goja.Compile("script.js", src, false)
	if err != nil {
		return nil, fault.New(fault.BadRequest, "Encountered exception while compiling Javascript. Exception = %v", err)
	}
	c = &compiled{prog: prog}
	r.mu.Lock()
	defer r.mu.Unlock()
	if prev := r.compiled[body]; prev != nil {
		return prev, nil
	}
	if len(r.compiled) >= maxCompiled {
		for k := range r.compiled {
			delete(r.compiled, k)
			break
		}
	}
	r.compiled[body] = c
	return c, nil
}

// vm is a prepared runtime: the script's function evaluated, the API installed.
type vm struct {
	rt *goja.Runtime
	fn goja.Callable
	// The built-ins the API uses, kept before any script could replace them: parse is the
	// native JSON.parse, for JSON the caller made (valid, bounded); stringify the guarded
	// JSON.stringify (guard.go), for the script's values.
	parse, stringify goja.Callable
	newError         goja.Constructor
	// c is the call running on this runtime; nil between calls.
	c *call
}

// borrow takes an idle runtime of c, or makes one (fresh) that prepare must ready.
func (r *Runner) borrow(c *compiled) (v *vm, fresh bool) {
	if v, ok := c.idle.Get().(*vm); ok {
		return v, false
	}
	v = &vm{rt: goja.New()}
	v.rt.SetMaxCallStackSize(r.limits.MaxCallDepth)
	return v, true
}

// prepare installs the guards and the API in a fresh runtime and evaluates the script. The
// script's text is an expression, which may call functions as it is evaluated: prepare runs
// within the budget of the call that borrowed the runtime, and an interrupt or a stack
// overflow is returned as it is, for failure to name.
func (v *vm) prepare(prog *goja.Program) error {
	json := v.rt.Get("JSON").ToObject(v.rt)
	v.parse, _ = goja.AssertFunction(json.Get("parse"))
	v.newError, _ = goja.AssertConstructor(v.rt.Get("Error"))
	if err := installGuards(v.rt); err != nil {
		var ie *goja.InterruptedError
		if errors.As(err, &ie) {
			// The call's budget ran out while the guards were installed (a loaded machine, a
			// short timeout): the call failed for time, as failure says, not for a fault here.
			return err
		}
		return fault.New(fault.Internal, "preparing the script runtime: %w", err)
	}
	v.stringify, _ = goja.AssertFunction(json.Get("stringify"))
	v.installAPI()
	val, err := v.rt.RunProgram(prog)
	if err != nil {
		var ex *goja.Exception
		if errors.As(err, &ex) {
			return fault.New(fault.BadRequest, "Encountered exception while compiling Javascript. Exception = %s", describe(ex))
		}
		return err
	}
	fn, ok := goja.AssertFunction(val)
	if !ok {
		return fault.New(fault.BadRequest, "Encountered exception while compiling Javascript. Exception = the script is not a function")
	}
	v.fn = fn
	return nil
}

// errTimeout, errMemory and errMemoryBeside are what a call is interrupted with.
var (
	errTimeout      = errors.New("time budget spent")
	errMemory       = errors.New("memory budget spent")
	errMemoryBeside = errors.New("memory budget spent, beside other calls")
)

// ErrMemoryBeside is the error of a call stopped for memory while other calls were over
// their budgets too: the heap is the process's, and any of them may have made it grow.
// Nothing the call wrote is kept; its caller should run it again once, within Alone.
var ErrMemoryBeside = fault.New(fault.BadRequest, "Encountered exception while executing function. Exception = RangeError: "+
	"the server's memory grew past the script's limit while other scripts ran beside it, and it was stopped")

// Alone runs fn, a call run again after ErrMemoryBeside, while no other such rerun runs: the
// call that spent the memory is then stopped again by itself (ErrMemory's message), and the
// calls that ran beside it finish.
func (r *Runner) Alone(fn func() error) error {
	r.aloneMu.Lock()
	defer r.aloneMu.Unlock()
	return fn()
}

// run runs body's function on a borrowed runtime within the call's limits: start (called
// with the runtime) makes the arguments and calls the function, then the queued callbacks
// run, then finish (if the call succeeded) reads its outcome. The runtime goes back to the
// pool only after a clean call.
func (r *Runner) run(body string, c *call, start func(v *vm) (goja.Value, error), finish func(v *vm) error) (err error) {
	comp, err := r.compile(body)
	if err != nil {
		return err
	}
	v, fresh := r.borrow(comp)
	c.limits, c.began = r.limits, time.Now()
	timer := time.AfterFunc(r.limits.Timeout, func() { v.rt.Interrupt(errTimeout) })
	stopWatch := r.watch.add(v.rt, r.limits.MaxMemory)
	reusable := false
	defer func() {
		stopWatch()
		fired := !timer.Stop()
		if p := recover(); p != nil {
			err = fault.New(fault.Internal, "The script runtime failed: %v", p)
			reusable = false
		}
		v.c = nil
		if reusable && !fired {
			v.rt.ClearInterrupt()
			comp.idle.Put(v)
		}
	}()
	if fresh {
		// Without a call: the API answers only once the function runs, so that what the
		// script does does not depend on whether its runtime was fresh.
		if err = v.prepare(comp.prog); err != nil {
			return c.failure(err)
		}
	}
	v.c = c
	if _, err = start(v); err == nil {
		err = c.drain()
	}
	if err == nil {
		// It went past its budget between two of the watchdog's ticks (large arrays cost
		// little time to allocate): its garbage is not collected yet.
		if over, beside := r.watch.over(v.rt); over && beside {
			return ErrMemoryBeside
		} else if over {
			return c.memoryFault()
		}
	}
	if err == nil && c.fatal != nil {
		err = c.fatal
	}
	if err == nil && finish != nil {
		err = finish(v)
	}
	if err != nil {
		return c.failure(err)
	}
	reusable = true
	return nil
}

// memoryFault is the error of a call stopped for its memory.
func (c *call) memoryFault() error {
	return fault.New(fault.BadRequest, "Encountered exception while executing function. Exception = RangeError: the script allocated more than its memory limit of %d MiB and was stopped", c.limits.MaxMemory>>20)
}

// failure turns what ended a call into the error its caller answers with.
func (c *call) failure(err error) error {
	var ie *goja.InterruptedError
	var so *goja.StackOverflowError
	var ex *goja.Exception
	switch {
	case errors.As(err, &ie):
		switch ie.Value() {
		case errTimeout:
			return fault.New(fault.Timeout, "The script ran past its time limit of %v and was stopped; nothing it wrote was kept", c.limits.Timeout)
		case errMemory:
			return c.memoryFault()
		case errMemoryBeside:
			return ErrMemoryBeside
		}
		if f, ok := ie.Value().(*fault.Error); ok {
			return f
		}
		return fault.New(fault.Internal, "The script was interrupted: %v", ie.Value())
	case errors.As(err, &so):
		return fault.New(fault.BadRequest, "Encountered exception while executing function. Exception = RangeError: Maximum call stack size exceeded (depth %d)", c.limits.MaxCallDepth)
	case errors.As(err, &ex):
		if obj, ok := ex.Value().(*goja.Object); ok {
			if f := c.opErrors[obj]; f != nil {
				// An operation's error, thrown on by the script: the operation's kind stands.
				return &fault.Error{Kind: f.Kind, Message: "Encountered exception while executing function. Exception = Error: " + f.Message, RetryAfter: f.RetryAfter}
			}
		}
		return fault.New(fault.BadRequest, "Encountered exception while executing function. Exception = %s", describe(ex))
	}
	return err
}

// describe renders an exception as the service does: the error, then its stack, each cut to
// a few KiB. Both are read through the thrown value, which may be any object (a toString that
// throws or loops, a stack getter): what cannot be read is left out, and the call's budget
// still bounds the reading.
func describe(ex *goja.Exception) string {
	s := clip(safeString(ex.Value(), "(a value that cannot be shown)"))
	if obj, ok := ex.Value().(*goja.Object); ok {
		var st goja.Value
		func() {
			defer func() { _ = recover() }()
			st = obj.Get("stack")
		}()
		if st != nil && !goja.IsUndefined(st) && !goja.IsNull(st) {
			if stack := safeString(st, ""); stack != "" {
				return s + "\r\nStack trace: " + clip(stack)
			}
		}
	}
	return s
}

// clip cuts s to at most 4 KiB, at a character's start, marking the cut.
func clip(s string) string {
	const most = 4096
	if len(s) <= most {
		return s
	}
	i := most
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "..."
}

// safeString converts v as String(v) would, or answers instead when that throws (or is
// interrupted: the runtime is not reused after a failed call).
func safeString(v goja.Value, instead string) (s string) {
	defer func() {
		if recover() != nil {
			s = instead
		}
	}()
	return v.String()
}
