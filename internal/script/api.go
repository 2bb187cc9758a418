package script

import (
	"crypto/rand"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/dop251/goja"

	"github.com/partita-db/partita/internal/fault"
)

// errorCodes are the statuses the server-side API reports in an operation error's number
// (and offers scripts as the global ErrorCodes), by fault kind.
var errorCodes = map[fault.Kind]int{
	fault.BadRequest: 400, fault.Unauthorized: 401, fault.Forbidden: 403, fault.NotFound: 404,
	fault.Conflict: 409, fault.PreconditionFailed: 412, fault.TooLarge: 413,
	fault.PartitionFull: 403, fault.Throttled: 429, fault.Timeout: 408, fault.Internal: 500,
	fault.Unavailable: 503, fault.Gone: 410, fault.Aborted: 424,
}

// installAPI defines the server-side API in the runtime's globals. The functions reach the
// running call through v.c, so one runtime serves call after call.
func (v *vm) installAPI() {
	rt := v.rt
	obj := func(methods map[string]func(goja.FunctionCall) goja.Value) *goja.Object {
		o := rt.NewObject()
		for name, f := range methods {
			_ = o.Set(name, f)
		}
		return o
	}
	coll := obj(map[string]func(goja.FunctionCall) goja.Value{
		"getSelfLink":     func(goja.FunctionCall) goja.Value { return rt.ToValue(v.data().SelfLink()) },
		"getAltLink":      func(goja.FunctionCall) goja.Value { return rt.ToValue(v.data().AltLink()) },
		"createDocument":  v.writeMethod(false),
		"upsertDocument":  v.writeMethod(true),
		"readDocument":    v.readDocument,
		"replaceDocument": v.replaceDocument,
		"deleteDocument":  v.deleteDocument,
		"queryDocuments":  v.queryDocuments,
		"readDocuments":   v.readDocuments,
	})
	v.installChain(coll)
	request := v.messageObject(func() *message { return &v.current().req })
	response := v.messageObject(func() *message { return &v.current().resp })
	_ = response.Set("getMaxResourceQuota", func(goja.FunctionCall) goja.Value {
		max, _ := v.data().Quota()
		return rt.ToValue(max)
	})
	_ = response.Set("getResourceQuotaCurrentUsage", func(goja.FunctionCall) goja.Value {
		_, usage := v.data().Quota()
		return rt.ToValue(usage)
	})
	context := obj(map[string]func(goja.FunctionCall) goja.Value{
		"getCollection": func(goja.FunctionCall) goja.Value { return coll },
		"getRequest":    func(goja.FunctionCall) goja.Value { return request },
		"getResponse":   func(goja.FunctionCall) goja.Value { return response },
		"abort": func(fc goja.FunctionCall) goja.Value {
			panic(fc.Argument(0)) // thrown, so the transaction rolls back
		},
	})
	_ = rt.Set("getContext", func(goja.FunctionCall) goja.Value { v.data(); return context })
	_ = rt.Set("__", coll)
	console := newConsoleFormat(rt)
	logf := func(fc goja.FunctionCall) goja.Value {
		v.current().logLine(console.format(fc.Arguments))
		return goja.Undefined()
	}
	_ = rt.Set("console", obj(map[string]func(goja.FunctionCall) goja.Value{
		"log": logf, "info": logf, "warn": logf, "error": logf, "debug": logf,
	}))
	codes := rt.NewObject()
	for name, n := range map[string]int{"BadRequest": 400, "Forbidden": 403, "NotFound": 404, "Conflict": 409,
		"PreconditionFailed": 412, "RequestEntityTooLarge": 413, "RetryWith": 449, "InternalServerError": 500} {
		_ = codes.Set(name, n)
	}
	_ = rt.Set("ErrorCodes", codes)
}

// current is the running call; a script's functions kept and called outside a call (they
// cannot be) would find none.
func (v *vm) current() *call {
	if v.c == nil {
		panic(v.rt.NewTypeError("The server-side API is only available while the script runs"))
	}
	return v.c
}

// data is the running call's collection; user-defined functions have none.
func (v *vm) data() Collection {
	c := v.current()
	if c.coll == nil {
		panic(v.rt.NewTypeError("A user-defined function cannot reach the collection: it may only compute from its arguments"))
	}
	return c.coll
}

// optionsAndCallback reads the optional options object and callback that end an API call's
// arguments, from position i: (options, callback), (callback) or (options).
func (v *vm) optionsAndCallback(fc goja.FunctionCall, i int) (*goja.Object, goja.Callable) {
	a := fc.Argument(i)
	if cb, ok := goja.AssertFunction(a); ok {
		return nil, cb
	}
	var opts *goja.Object
	if !goja.IsUndefined(a) && !goja.IsNull(a) {
		opts = a.ToObject(v.rt)
	}
	cb, _ := goja.AssertFunction(fc.Argument(i + 1))
	return opts, cb
}

func optString(o *goja.Object, name string) string {
	if o == nil {
		return ""
	}
	if x := o.Get(name); x != nil && !goja.IsUndefined(x) && !goja.IsNull(x) {
		return x.String()
	}
	return ""
}

func optBool(o *goja.Object, name string) bool {
	if o == nil {
		return false
	}
	x := o.Get(name)
	return x != nil && x.ToBoolean()
}

func writeOptions(o *goja.Object) WriteOptions {
	return WriteOptions{IfMatch: strings.Trim(optString(o, "etag"), `"`)}
}

// finish hands an operation's outcome to its callback, later. Without a callback an error
// ends the call, as the service throws it.
func (v *vm) finish(cb goja.Callable, err error, results func() []goja.Value) {
	c := v.current()
	c.later(func() error {
		if cb == nil {
			return err
		}
		args := []goja.Value{goja.Undefined()}
		if err != nil {
			args[0] = v.opError(err)
		} else {
			args = append(args, results()...)
		}
		_, cerr := cb(goja.Undefined(), args...)
		return cerr
	})
}

// opError is the error object a callback receives: number is the status, message and body
// carry the text in the service's {"Errors":[...]} shape.
func (v *vm) opError(err error) goja.Value {
	f := fault.From(err)
	text := fmt.Sprintf(`{"Errors":[%q]}`, f.Message)
	e, cerr := v.newError(nil, v.rt.ToValue(text))
	if cerr != nil {
		panic(cerr)
	}
	_ = e.Set("body", text)
	_ = e.Set("number", errorCodes[f.Kind])
	c := v.current()
	if c.opErrors == nil {
		c.opErrors = map[*goja.Object]*fault.Error{}
	}
	c.opErrors[e] = f
	return e
}

// fatalIf ends the call, uncatchably, when an operation reached outside its partition.
func (v *vm) fatalIf(err error) {
	if errors.Is(err, ErrOtherPartition) {
		v.current().fatal = err
		v.rt.Interrupt(err)
	}
}

// ErrOtherPartition is what a Collection answers an operation that names another logical
// partition than the call's: it fails the whole call.
var ErrOtherPartition = fault.New(fault.BadRequest, "Requests originating from scripts cannot reference partition keys other than the one for which client request was submitted.")

func (v *vm) writeMethod(upsert bool) func(goja.FunctionCall) goja.Value {
	return func(fc goja.FunctionCall) goja.Value {
		coll := v.data()
		doc := v.document(fc.Argument(1))
		opts, cb := v.optionsAndCallback(fc, 2)
		if !v.current().accept() {
			return v.rt.ToValue(false)
		}
		if id := doc.Get("id"); (id == nil || goja.IsUndefined(id)) && !optBool(opts, "disableAutomaticIdGeneration") {
			_ = doc.Set("id", newID())
		}
		body := v.toJSON(doc)
		var out []byte
		var err error
		if upsert {
			out, err = coll.Upsert(body, writeOptions(opts))
		} else {
			out, err = coll.Create(body, writeOptions(opts))
		}
		v.fatalIf(err)
		v.finishDocument(cb, out, err)
		return v.rt.ToValue(true)
	}
}

// document is the document argument of a write, which must be an object.
func (v *vm) document(arg goja.Value) *goja.Object {
	doc, ok := arg.(*goja.Object)
	if !ok {
		panic(v.rt.NewTypeError("The document to write must be an object"))
	}
	return doc
}

// finishDocument hands a document operation's outcome to its callback: the document and
// (empty) response options.
func (v *vm) finishDocument(cb goja.Callable, out []byte, err error) {
	v.finish(cb, err, func() []goja.Value { return []goja.Value{v.fromJSON(out), v.rt.NewObject()} })
}

func (v *vm) readDocument(fc goja.FunctionCall) goja.Value {
	coll := v.data()
	ref := v.docRef(fc.Argument(0))
	opts, cb := v.optionsAndCallback(fc, 1)
	if !v.current().accept() {
		return v.rt.ToValue(false)
	}
	out, err := coll.Read(ref, writeOptions(opts))
	v.finishDocument(cb, out, err)
	return v.rt.ToValue(true)
}

func (v *vm) replaceDocument(fc goja.FunctionCall) goja.Value {
	coll := v.data()
	ref := v.docRef(fc.Argument(0))
	doc := v.document(fc.Argument(1))
	opts, cb := v.optionsAndCallback(fc, 2)
	if !v.current().accept() {
		return v.rt.ToValue(false)
	}
	out, err := coll.Replace(ref, v.toJSON(doc), writeOptions(opts))
	v.fatalIf(err)
	v.finishDocument(cb, out, err)
	return v.rt.ToValue(true)
}

func (v *vm) deleteDocument(fc goja.FunctionCall) goja.Value {
	coll := v.data()
	ref := v.docRef(fc.Argument(0))
	opts, cb := v.optionsAndCallback(fc, 1)
	if !v.current().accept() {
		return v.rt.ToValue(false)
	}
	err := coll.Delete(ref, writeOptions(opts))
	v.finish(cb, err, func() []goja.Value { return []goja.Value{v.rt.NewObject()} })
	return v.rt.ToValue(true)
}

func (v *vm) queryDocuments(fc goja.FunctionCall) goja.Value {
	coll := v.data()
	var q Query
	switch spec := fc.Argument(1).(type) {
	case *goja.Object:
		if spec.ClassName() == "String" {
			q.Text = spec.String()
			break
		}
		q.Text = optString(spec, "query")
		if p := spec.Get("parameters"); p != nil && !goja.IsUndefined(p) && !goja.IsNull(p) {
			q.Params = v.toJSON(p)
		}
	default:
		if goja.IsUndefined(spec) || goja.IsNull(spec) {
			panic(v.rt.NewTypeError("queryDocuments needs a query: SQL text or {query, parameters}"))
		}
		q.Text = spec.String()
	}
	opts, cb := v.optionsAndCallback(fc, 2)
	return v.feed(cb, feedOptions(opts), func(o FeedOptions) (Page, error) { return coll.Query(q, o) })
}

func (v *vm) readDocuments(fc goja.FunctionCall) goja.Value {
	coll := v.data()
	opts, cb := v.optionsAndCallback(fc, 1)
	return v.feed(cb, feedOptions(opts), coll.ReadAll)
}

func feedOptions(o *goja.Object) FeedOptions {
	fo := FeedOptions{Continuation: optString(o, "continuation")}
	if o != nil {
		if x := o.Get("pageSize"); x != nil && !goja.IsUndefined(x) {
			fo.PageSize = int(x.ToInteger())
		}
	}
	return fo
}

// feed runs one page of a query or read feed; the callback gets the documents and
// {continuation}.
func (v *vm) feed(cb goja.Callable, o FeedOptions, read func(FeedOptions) (Page, error)) goja.Value {
	if !v.current().accept() {
		return v.rt.ToValue(false)
	}
	page, err := read(o)
	v.finish(cb, err, func() []goja.Value {
		n := 2
		for _, d := range page.Docs {
			n += len(d) + 1
		}
		arr := make([]byte, 0, n)
		arr = append(arr, '[')
		for i, d := range page.Docs {
			if i > 0 {
				arr = append(arr, ',')
			}
			arr = append(arr, d...)
		}
		arr = append(arr, ']')
		info := v.rt.NewObject()
		if page.Continuation != "" {
			_ = info.Set("continuation", page.Continuation)
		}
		return []goja.Value{v.fromJSON(arr), info}
	})
	return v.rt.ToValue(true)
}

// docRef reads a document link: the collection's self link followed by docs/<rid>, or any
// link whose last docs/ segment is the id, or a bare id.
func (v *vm) docRef(link goja.Value) DocRef {
	if goja.IsUndefined(link) || goja.IsNull(link) {
		panic(v.rt.NewTypeError("A document link is required"))
	}
	s := strings.TrimSuffix(link.String(), "/")
	self := strings.TrimSuffix(v.data().SelfLink(), "/") + "/docs/"
	if rest, ok := strings.CutPrefix(strings.TrimPrefix(s, "/"), self); ok && !strings.Contains(rest, "/") {
		return DocRef{RID: rest}
	}
	if i := strings.LastIndex(s, "/docs/"); i >= 0 {
		s = s[i+len("/docs/"):]
		if id, err := url.PathUnescape(s); err == nil {
			s = id
		}
	}
	return DocRef{ID: s}
}

// messageObject is a request or response object over the message get returns.
func (v *vm) messageObject(get func() *message) *goja.Object {
	o := v.rt.NewObject()
	_ = o.Set("getBody", func(goja.FunctionCall) goja.Value {
		m := get()
		if m.body == nil {
			if m.json == nil {
				return goja.Undefined()
			}
			m.body = v.fromJSON(m.json)
		}
		return m.body
	})
	_ = o.Set("setBody", func(fc goja.FunctionCall) goja.Value {
		m := get()
		m.body, m.set = fc.Argument(0), true
		return goja.Undefined()
	})
	_ = o.Set("getValue", func(fc goja.FunctionCall) goja.Value {
		if h, ok := get().headers[strings.ToLower(fc.Argument(0).String())]; ok {
			return v.rt.ToValue(h)
		}
		return goja.Undefined()
	})
	_ = o.Set("setValue", func(fc goja.FunctionCall) goja.Value {
		m := get()
		if m.headers == nil {
			m.headers = map[string]string{}
		}
		m.headers[strings.ToLower(fc.Argument(0).String())] = fc.Argument(1).String()
		return goja.Undefined()
	})
	_ = o.Set("getOperationType", func(goja.FunctionCall) goja.Value {
		if op := get().operation; op != "" {
			return v.rt.ToValue(op)
		}
		return goja.Undefined()
	})
	_ = o.Set("getMaxItemCount", func(goja.FunctionCall) goja.Value {
		if h, ok := get().headers["x-ms-max-item-count"]; ok {
			return v.rt.ToValue(h)
		}
		return v.rt.ToValue(-1)
	})
	return o
}

// fromJSON parses JSON the runtime's way. Caller-made JSON is valid; a failure is ours.
func (v *vm) fromJSON(b []byte) goja.Value {
	val, err := v.parse(goja.Undefined(), v.rt.ToValue(string(b)))
	if err != nil {
		panic(err)
	}
	return val
}

// toJSON serializes a script's value; what JSON cannot hold (functions, undefined, cycles)
// is a TypeError the script can catch.
func (v *vm) toJSON(val goja.Value) []byte {
	out, err := v.stringify(goja.Undefined(), val)
	if err != nil {
		panic(err)
	}
	if goja.IsUndefined(out) {
		panic(v.rt.NewTypeError("The value cannot be written as JSON"))
	}
	s := out.String()
	if len(s) > v.current().limits.MaxInputBytes {
		panic(v.rt.NewTypeError(fmt.Sprintf("The value is %d bytes as JSON; the limit is %d", len(s), v.current().limits.MaxInputBytes)))
	}
	return []byte(s)
}

// newID is a random UUID (version 4), as the service generates for documents without an id.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
