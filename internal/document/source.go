package document

import (
	"math"
	"strings"

	"github.com/partita-db/partita/internal/epk"
	"github.com/partita-db/partita/internal/fault"
	"github.com/partita-db/partita/internal/value"
)

// Source is an item's content as a front end hands it over: the JSON bytes of a request body
// (FromJSON), or a value it already holds (FromValue: a CQL row, a script's result), which is
// serialized once for storage and never parsed again.
type Source struct {
	json []byte
	val  value.Value
	// isValue tells the two forms apart: a JSON body may be empty, a value may be undefined.
	isValue bool
}

// FromJSON is an item given as JSON bytes.
func FromJSON(body []byte) Source { return Source{json: body} }

// FromValue is an item given as a parsed value.
func FromValue(v value.Value) Source { return Source{val: v, isValue: true} }

// JSON is the item as JSON.
func (s Source) JSON() []byte {
	if !s.isValue {
		return s.json
	}
	return value.AppendJSON(nil, s.val)
}

// Parse validates the item and extracts its partition key at paths, as Parse does for JSON.
func (s Source) Parse(paths [][]string) (*Item, epk.Key, error) {
	if !s.isValue {
		return Parse(s.json, paths)
	}
	return parseValue(s.val, paths)
}

// parseValue is Parse for an item that is already a value: the same rules, checked on the
// value instead of on bytes.
func parseValue(v value.Value, paths [][]string) (*Item, epk.Key, error) {
	if v.Kind() != value.Object {
		return nil, nil, fault.New(fault.BadRequest, "The item must be a JSON object")
	}
	kept := make([]value.Member, 0, len(v.Members()))
	for _, m := range v.Members() {
		if !systemProperties[m.Key] && !m.Val.IsUndefined() {
			kept = append(kept, m)
		}
	}
	obj := value.Obj(kept)
	id, key, err := identity(obj, paths)
	if err != nil {
		return nil, nil, err
	}
	body := value.AppendJSON(nil, obj)
	if len(body) > MaxItemBytes {
		return nil, nil, fault.New(fault.TooLarge, "Request size is too large: the item is %d bytes; the limit is %d bytes", len(body), MaxItemBytes)
	}
	// The body holds the kept members alone, so Stamp copies them in one span.
	return &Item{body: body, kept: [][2]int{{1, len(body) - 1}}, ID: id, Value: obj}, key, nil
}

// keyOf is the partition key component at path in an item value.
func keyOf(item value.Value, path []string) (epk.Value, error) {
	v := item
	for _, seg := range path {
		v = v.Get(seg)
	}
	switch v.Kind() {
	case value.Undefined:
		return epk.Undefined(), nil
	case value.Null:
		return epk.Null(), nil
	case value.Boolean:
		return epk.Bool(v.Bool()), nil
	case value.String:
		return epk.String(v.Str()), nil
	case value.Number:
		if math.IsInf(v.Num(), 0) || math.IsNaN(v.Num()) {
			return epk.Value{}, fault.New(fault.BadRequest, "The partition key value at %s is a number out of range", "/"+strings.Join(path, "/"))
		}
		return epk.Number(v.Num()), nil
	}
	// An object or array is no partition key value: the service files such an item, like one
	// without the property, under the undefined key, and the SDKs then send [{}] for it.
	return epk.Undefined(), nil
}

// MaxRowIDBytes bounds the id of an item a front end made itself (Row): enough for a CQL
// row's encoded key, hex-encoded, at Cassandra's 64 KiB per key component for a few
// components, and far from storage's limits.
const MaxRowIDBytes = 256 << 10

// Row validates an item a front end built itself, such as a CQL row, whose string id it chose
// (an encoded key): only the id's presence and length are checked, not Cosmos's rules for ids,
// and there is no partition key to extract (the front end placed the row).
func Row(v value.Value) (*Item, error) {
	if v.Kind() != value.Object {
		return nil, fault.New(fault.BadRequest, "The item must be a JSON object")
	}
	id := v.Get("id")
	if id.Kind() != value.String || id.Str() == "" {
		return nil, fault.New(fault.BadRequest, "A row needs a non-empty string id")
	}
	if len(id.Str()) > MaxRowIDBytes {
		return nil, fault.New(fault.TooLarge, "The row's key is %d bytes encoded; the limit is %d", len(id.Str()), MaxRowIDBytes)
	}
	body := value.AppendJSON(nil, v)
	if len(body) > MaxItemBytes {
		return nil, fault.New(fault.TooLarge, "The row is %d bytes; the limit is %d bytes", len(body), MaxItemBytes)
	}
	return &Item{body: body, kept: [][2]int{{1, len(body) - 1}}, ID: id.Str(), Value: v}, nil
}
