package value

import (
	"math"
	"strings"
)

// Kind is the type of a value, in Cosmos's type order.
type Kind uint8

const (
	Undefined Kind = iota // no value at all: a missing property, a failed expression
	Null
	Boolean
	Number
	String
	Array
	Object
)

func (k Kind) String() string {
	return [...]string{"undefined", "null", "boolean", "number", "string", "array", "object"}[k]
}

// Value is an immutable JSON value, or undefined. The zero Value is undefined.
type Value struct {
	k   Kind
	b   bool
	n   float64
	s   string
	arr []Value
	obj []Member // in document order, keys unique
}

// Member is one property of an object.
type Member struct {
	Key string
	Val Value
}

var (
	undefinedV = Value{}
	nullV      = Value{k: Null}
	trueV      = Value{k: Boolean, b: true}
	falseV     = Value{k: Boolean}
)

func Undef() Value { return undefinedV }
func NullV() Value { return nullV }
func Bool(b bool) Value {
	if b {
		return trueV
	}
	return falseV
}
func Num(f float64) Value     { return Value{k: Number, n: f} }
func Str(s string) Value      { return Value{k: String, s: s} }
func Arr(elems []Value) Value { return Value{k: Array, arr: elems} }

// Obj makes an object from members; later duplicates of a key replace earlier ones.
func Obj(members []Member) Value {
	for i := 1; i < len(members); i++ {
		for j := 0; j < i; j++ {
			if members[j].Key == members[i].Key {
				return Value{k: Object, obj: dedupe(members)}
			}
		}
	}
	return Value{k: Object, obj: members}
}

func dedupe(ms []Member) []Member {
	out := make([]Member, 0, len(ms))
	idx := map[string]int{}
	for _, m := range ms {
		if i, ok := idx[m.Key]; ok {
			out[i].Val = m.Val
			continue
		}
		idx[m.Key] = len(out)
		out = append(out, m)
	}
	return out
}

func (v Value) Kind() Kind        { return v.k }
func (v Value) IsUndefined() bool { return v.k == Undefined }
func (v Value) Bool() bool        { return v.b }
func (v Value) Num() float64      { return v.n }
func (v Value) Str() string       { return v.s }
func (v Value) Elems() []Value    { return v.arr }
func (v Value) Members() []Member { return v.obj }
func (v Value) Len() int          { return max(len(v.arr), len(v.obj)) }
func (v Value) IsInteger() bool {
	return v.k == Number && v.n == math.Trunc(v.n) && !math.IsInf(v.n, 0)
}
func (v Value) IsTrue() bool      { return v.k == Boolean && v.b }
func (v Value) IsPrimitive() bool { return v.k >= Null && v.k <= String }

// Get returns the property key of an object; undefined for a missing key or a non-object.
func (v Value) Get(key string) Value {
	for i := range v.obj {
		if v.obj[i].Key == key {
			return v.obj[i].Val
		}
	}
	return undefinedV
}

// Index returns element i of an array; undefined when out of range or not an array.
func (v Value) Index(i int) Value {
	if i < 0 || i >= len(v.arr) {
		return undefinedV
	}
	return v.arr[i]
}

// Numbers returns the elements of an array of numbers; ok is false when v is not an array or
// holds anything but numbers.
func (v Value) Numbers() (nums []float64, ok bool) {
	if v.k != Array {
		return nil, false
	}
	nums = make([]float64, len(v.arr))
	for i, e := range v.arr {
		if e.k != Number {
			return nil, false
		}
		nums[i] = e.n
	}
	return nums, true
}

// Compare orders any two values: first by kind in Cosmos's type order, then by value.
// Strings compare by code point (byte order of UTF-8), arrays and objects element by element.
func Compare(a, b Value) int {
	if a.k != b.k {
		if a.k < b.k {
			return -1
		}
		return 1
	}
	switch a.k {
	case Boolean:
		switch {
		case a.b == b.b:
			return 0
		case !a.b:
			return -1
		}
		return 1
	case Number:
		switch {
		case a.n < b.n:
			return -1
		case a.n > b.n:
			return 1
		}
		return 0
	case String:
		return strings.Compare(a.s, b.s)
	case Array:
		for i := 0; i < len(a.arr) && i < len(b.arr); i++ {
			if c := Compare(a.arr[i], b.arr[i]); c != 0 {
				return c
			}
		}
		return cmpInt(len(a.arr), len(b.arr))
	case Object:
		for i := 0; i < len(a.obj) && i < len(b.obj); i++ {
			if c := strings.Compare(a.obj[i].Key, b.obj[i].Key); c != 0 {
				return c
			}
			if c := Compare(a.obj[i].Val, b.obj[i].Val); c != 0 {
				return c
			}
		}
		return cmpInt(len(a.obj), len(b.obj))
	}
	return 0
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Equal is deep equality; objects are equal when they have the same members in any order.
func Equal(a, b Value) bool {
	if a.k != b.k {
		return false
	}
	switch a.k {
	case Undefined, Null:
		return true
	case Boolean:
		return a.b == b.b
	case Number:
		return a.n == b.n
	case String:
		return a.s == b.s
	case Array:
		if len(a.arr) != len(b.arr) {
			return false
		}
		for i := range a.arr {
			if !Equal(a.arr[i], b.arr[i]) {
				return false
			}
		}
		return true
	}
	// A member whose value is undefined is no member at all (AppendJSON and Key leave it
	// out), so the defined members must match one to one.
	n := 0
	for _, m := range a.obj {
		if m.Val.k == Undefined {
			continue
		}
		n++
		if !Equal(m.Val, b.Get(m.Key)) {
			return false
		}
	}
	for _, m := range b.obj {
		if m.Val.k != Undefined {
			n--
		}
	}
	return n == 0
}
