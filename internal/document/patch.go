package document

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/partita-db/partita/internal/fault"
)

// MaxPatchOperations is how many operations one patch may carry, as in Cosmos.
const MaxPatchOperations = 10

// PatchOp is one partial-update operation.
type PatchOp struct {
	Op    string          `json:"op"` // add, set, replace, remove, incr, move
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value,omitempty"`
	From  string          `json:"from,omitempty"` // for move
}

// Patch applies ops in order to the item doc and returns the new item body. Property order is
// kept. Any failing operation fails the whole patch with a 400 naming it.
func Patch(doc []byte, ops []PatchOp) ([]byte, error) {
	if len(ops) == 0 {
		return nil, fault.New(fault.BadRequest, "A patch needs at least one operation")
	}
	if len(ops) > MaxPatchOperations {
		return nil, fault.New(fault.BadRequest, "A patch has at most %d operations; got %d", MaxPatchOperations, len(ops))
	}
	root, err := parseNode(doc)
	if err != nil {
		return nil, fault.New(fault.Internal, "stored item is not JSON: %w", err)
	}
	for i, op := range ops {
		if err := applyOp(root, op); err != nil {
			return nil, fault.New(fault.BadRequest, "Patch operation %d (%s %s) failed: %v", i, op.Op, op.Path, err)
		}
	}
	var b bytes.Buffer
	root.write(&b)
	return b.Bytes(), nil
}

type patchError string

func (e patchError) Error() string { return string(e) }

func applyOp(root *node, op PatchOp) error {
	segs, err := splitPointer(op.Path)
	if err != nil {
		return err
	}
	if err := patchable(segs); err != nil {
		return err
	}
	var val *node
	switch op.Op {
	case "add", "set", "replace", "incr":
		if len(op.Value) == 0 {
			return patchError("the operation needs a value")
		}
		if val, err = parseNode(op.Value); err != nil {
			return patchError("the value is not valid JSON")
		}
	case "remove":
	case "move":
		from, err := splitPointer(op.From)
		if err != nil {
			return err
		}
		if err := patchable(from); err != nil { // moving one away removes it
			return err
		}
		parent, last, err := root.parentOf(from)
		if err != nil {
			return err
		}
		if val, err = parent.remove(last); err != nil {
			return err
		}
	default:
		return patchError("unknown operation; use add, set, replace, remove, incr or move")
	}
	parent, last, err := root.parentOf(segs)
	if err != nil {
		return err
	}
	switch op.Op {
	case "add", "move":
		return parent.insert(last, val, true)
	case "set":
		return parent.insert(last, val, false)
	case "replace":
		if parent.get(last) == nil {
			return patchError("the path does not exist")
		}
		return parent.insert(last, val, false)
	case "remove":
		_, err := parent.remove(last)
		return err
	case "incr":
		return parent.increment(last, val)
	}
	return nil
}

// patchable refuses the path of a system property or of the id.
func patchable(segs []string) error {
	if len(segs) == 1 && (systemProperties[segs[0]] || segs[0] == "id") {
		return patchError("system properties and the id cannot be patched")
	}
	return nil
}

// splitPointer splits a JSON pointer "/a/b/0" into its unescaped segments.
func splitPointer(p string) ([]string, error) {
	if !strings.HasPrefix(p, "/") || p == "/" {
		return nil, patchError("the path must start with '/' and name a property")
	}
	segs := strings.Split(p[1:], "/")
	for i, s := range segs {
		segs[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return segs, nil
}

// node is a JSON value that keeps the order of object members.
type node struct {
	kind byte // '{', '[' or 0 for a scalar
	keys []string
	vals []*node // members of an object, elements of an array
	raw  []byte  // a scalar's JSON
}

func parseNode(b []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	n, err := readNode(dec)
	if err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, patchError("trailing data")
	}
	return n, nil
}

func readNode(dec *json.Decoder) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		n := &node{kind: byte(t)}
		for dec.More() {
			if n.kind == '{' {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, k.(string))
			}
			v, err := readNode(dec)
			if err != nil {
				return nil, err
			}
			n.vals = append(n.vals, v)
		}
		_, err := dec.Token() // closing delimiter
		return n, err
	case string:
		return &node{raw: quoteJSON(t)}, nil
	case json.Number:
		if _, err := strconv.ParseFloat(string(t), 64); err != nil {
			// Past the range of a double, as item bodies may not hold (value.Parse).
			return nil, patchError("the number " + shorten(string(t)) + " is out of the range of a double")
		}
		return &node{raw: []byte(t)}, nil
	case bool:
		return &node{raw: []byte(strconv.FormatBool(t))}, nil
	default:
		return &node{raw: []byte("null")}, nil
	}
}

// shorten keeps a message readable whatever the input.
func shorten(s string) string {
	if len(s) > 24 {
		return s[:24] + "…"
	}
	return s
}

func quoteJSON(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return bytes.TrimRight(b.Bytes(), "\n")
}

func (n *node) write(b *bytes.Buffer) {
	switch n.kind {
	case '{':
		b.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(quoteJSON(k))
			b.WriteByte(':')
			n.vals[i].write(b)
		}
		b.WriteByte('}')
	case '[':
		b.WriteByte('[')
		for i, v := range n.vals {
			if i > 0 {
				b.WriteByte(',')
			}
			v.write(b)
		}
		b.WriteByte(']')
	default:
		b.Write(n.raw)
	}
}

// parentOf walks to the container holding the last segment.
func (n *node) parentOf(segs []string) (*node, string, error) {
	cur := n
	for _, s := range segs[:len(segs)-1] {
		if cur = cur.get(s); cur == nil {
			return nil, "", patchError("a parent of the path does not exist")
		}
	}
	if cur.kind == 0 {
		return nil, "", patchError("the parent of the path is not an object or array")
	}
	return cur, segs[len(segs)-1], nil
}

func (n *node) index(seg string, allowEnd bool) (int, error) {
	if allowEnd && seg == "-" {
		return len(n.vals), nil
	}
	i, err := strconv.Atoi(seg)
	limit := len(n.vals) - 1
	if allowEnd {
		limit++
	}
	if err != nil || i < 0 || i > limit {
		return 0, patchError("the array index " + strconv.Quote(seg) + " is out of range")
	}
	return i, nil
}

func (n *node) get(seg string) *node {
	switch n.kind {
	case '{':
		for i := len(n.keys) - 1; i >= 0; i-- {
			if n.keys[i] == seg {
				return n.vals[i]
			}
		}
	case '[':
		if i, err := n.index(seg, false); err == nil {
			return n.vals[i]
		}
	}
	return nil
}

// insert sets seg to v. In an array, insertAt inserts before the index (add) instead of
// replacing the element there (set, replace).
func (n *node) insert(seg string, v *node, insertAt bool) error {
	if n.kind == '{' {
		for i := range n.keys {
			if n.keys[i] == seg {
				n.vals[i] = v
				return nil
			}
		}
		n.keys = append(n.keys, seg)
		n.vals = append(n.vals, v)
		return nil
	}
	i, err := n.index(seg, insertAt || seg == "-")
	if err != nil {
		return err
	}
	if insertAt || i == len(n.vals) {
		n.vals = append(n.vals[:i], append([]*node{v}, n.vals[i:]...)...)
	} else {
		n.vals[i] = v
	}
	return nil
}

func (n *node) remove(seg string) (*node, error) {
	if n.kind == '{' {
		for i := range n.keys {
			if n.keys[i] == seg {
				v := n.vals[i]
				n.keys = append(n.keys[:i], n.keys[i+1:]...)
				n.vals = append(n.vals[:i], n.vals[i+1:]...)
				return v, nil
			}
		}
		return nil, patchError("the path does not exist")
	}
	i, err := n.index(seg, false)
	if err != nil {
		return nil, err
	}
	v := n.vals[i]
	n.vals = append(n.vals[:i], n.vals[i+1:]...)
	return v, nil
}

// increment adds the number v to the number at seg, creating it if absent. Integers stay
// integers; anything else becomes a float.
func (n *node) increment(seg string, v *node) error {
	if v.kind != 0 || !isNumber(v.raw) {
		return patchError("incr needs a number value")
	}
	cur := n.get(seg)
	if cur == nil {
		return n.insert(seg, v, false)
	}
	if cur.kind != 0 || !isNumber(cur.raw) {
		return patchError("incr applies only to a number")
	}
	a, aerr := strconv.ParseInt(string(cur.raw), 10, 64)
	b, berr := strconv.ParseInt(string(v.raw), 10, 64)
	if aerr == nil && berr == nil && (b <= 0 || a <= 1<<63-1-b) && (b >= 0 || a >= -1<<63-b) {
		cur.raw = strconv.AppendInt(nil, a+b, 10)
		return nil
	}
	fa, _ := strconv.ParseFloat(string(cur.raw), 64)
	fb, _ := strconv.ParseFloat(string(v.raw), 64)
	if math.IsInf(fa+fb, 0) || math.IsNaN(fa+fb) {
		return patchError("incr would overflow the number")
	}
	cur.raw = strconv.AppendFloat(nil, fa+fb, 'g', -1, 64)
	return nil
}

func isNumber(raw []byte) bool {
	return len(raw) > 0 && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9')
}
