package jinja

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Values are plain Go values with Python semantics:
//
//	nil → None, bool, int64, float64, string, *List (list or tuple),
//	*Dict (ordered dict), *Namespace, Undefined, *Macro, *Func.
type Value = any

// Undefined is the value of a missing name, key or attribute. It prints as
// "" and is falsy; using it further (attribute, call, arithmetic) is an
// error, as with Jinja2's default Undefined.
type Undefined struct{ Name string }

// List is a Python list, or a tuple when Tuple is set.
type List struct {
	Items []Value
	Tuple bool
}

// Dict is a Python dict: keys keep insertion order. Keys are strings,
// int64, float64, bool or nil. Small dicts (most: messages, arguments) are
// searched linearly; an index is built past smallDict keys.
type Dict struct {
	keys  []Value
	vals  []Value
	index map[Value]int
}

const smallDict = 12

// NewDict returns an empty dict.
func NewDict() *Dict { return &Dict{} }

func (d *Dict) find(k Value) int {
	k = normKey(k)
	if d.index != nil {
		if i, ok := d.index[k]; ok {
			return i
		}
		return -1
	}
	if s, ok := k.(string); ok { // the common case, without interface compares
		for i, key := range d.keys {
			if ks, ok := key.(string); ok && ks == s {
				return i
			}
		}
		return -1
	}
	for i, key := range d.keys {
		if normKey(key) == k {
			return i
		}
	}
	return -1
}

// Set adds or replaces a key, keeping the first position.
func (d *Dict) Set(k, v Value) {
	if i := d.find(k); i >= 0 {
		d.vals[i] = v
		return
	}
	d.keys = append(d.keys, k)
	d.vals = append(d.vals, v)
	switch {
	case d.index != nil:
		d.index[normKey(k)] = len(d.keys) - 1
	case len(d.keys) > smallDict:
		d.index = make(map[Value]int, 2*len(d.keys))
		for i, key := range d.keys {
			d.index[normKey(key)] = i
		}
	}
}

// Get looks a key up.
func (d *Dict) Get(k Value) (Value, bool) {
	if i := d.find(k); i >= 0 {
		return d.vals[i], true
	}
	return nil, false
}

// Len is the number of keys.
func (d *Dict) Len() int { return len(d.keys) }

// normKey maps Python-equal numbers to one key (1 == 1.0).
func normKey(k Value) Value {
	if f, ok := k.(float64); ok && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return int64(f)
	}
	return k
}

// Namespace is the mutable object namespace() returns.
type Namespace struct{ attrs *Dict }

// Func is a built-in callable (global function or bound method).
type Func struct {
	Name string
	Fn   func(r *renderer, args []Value, kw *Dict) Value
}

func truthy(v Value) bool {
	switch x := v.(type) {
	case nil, Undefined:
		return false
	case bool:
		return x
	case int64:
		return x != 0
	case float64:
		return x != 0
	case string:
		return x != ""
	case *List:
		return len(x.Items) > 0
	case *Dict:
		return x.Len() > 0
	}
	return true
}

func typeName(v Value) string {
	switch x := v.(type) {
	case nil:
		return "NoneType"
	case Undefined:
		return "Undefined"
	case bool:
		return "bool"
	case int64:
		return "int"
	case float64:
		return "float"
	case string:
		return "str"
	case *List:
		if x.Tuple {
			return "tuple"
		}
		return "list"
	case *Dict:
		return "dict"
	case *Namespace:
		return "Namespace"
	case *Macro, *Func:
		return "function"
	}
	return fmt.Sprintf("%T", v)
}

// boundedBuilder stops growing at max bytes and records that it did.
type boundedBuilder struct {
	strings.Builder
	max  int
	over bool
}

func (b *boundedBuilder) WriteString(s string) {
	if b.over || b.Len()+len(s) > b.max {
		b.over = true
		return
	}
	b.Builder.WriteString(s)
}

func (b *boundedBuilder) WriteByte(c byte) error {
	b.WriteString(string(rune(c)))
	return nil
}

func (b *boundedBuilder) WriteRune(r rune) {
	var buf [4]byte
	b.WriteString(string(utf8.AppendRune(buf[:0], r)))
}

// maxDataDepth bounds recursion over nested values (printing, JSON).
const maxDataDepth = 128

// writeRepr writes Python's repr(v) (str() of a container prints the
// reprs of its items). It gives up once b is full.
func writeRepr(b *boundedBuilder, v Value, depth int) {
	if b.over {
		return
	}
	if depth > maxDataDepth {
		b.WriteString("...")
		return
	}
	switch x := v.(type) {
	case nil:
		b.WriteString("None")
	case Undefined:
		b.WriteString("Undefined")
	case bool:
		if x {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case float64:
		b.WriteString(pyFloat(x))
	case string:
		writeStrRepr(b, x)
	case *List:
		open, close := "[", "]"
		if x.Tuple {
			open, close = "(", ")"
		}
		b.WriteString(open)
		for i, it := range x.Items {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, it, depth+1)
		}
		if x.Tuple && len(x.Items) == 1 {
			b.WriteByte(',')
		}
		b.WriteString(close)
	case *Dict:
		b.WriteByte('{')
		for i, k := range x.keys {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, k, depth+1)
			b.WriteString(": ")
			writeRepr(b, x.vals[i], depth+1)
		}
		b.WriteByte('}')
	case *Namespace:
		b.WriteString("<Namespace ")
		writeRepr(b, x.attrs, depth+1)
		b.WriteString(">")
	case *Macro:
		b.WriteString("<Macro '" + x.name + "'>")
	case *Func:
		b.WriteString("<built-in function " + x.Name + ">")
	default:
		b.WriteString(fmt.Sprintf("%v", x))
	}
}

// equal is Python's ==.
func equal(a, b Value) bool {
	if x, y, ok := numbers(a, b); ok {
		return x == y
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case Undefined:
		_, ok := b.(Undefined)
		return ok
	case string:
		y, ok := b.(string)
		return ok && x == y
	case *List:
		y, ok := b.(*List)
		return ok && x.Tuple == y.Tuple && slices.EqualFunc(x.Items, y.Items, equal)
	case *Dict:
		y, ok := b.(*Dict)
		if !ok || x.Len() != y.Len() {
			return false
		}
		for i, k := range x.keys {
			if v, ok := y.Get(k); !ok || !equal(x.vals[i], v) {
				return false
			}
		}
		return true
	}
	return a == b
}

// numbers returns both operands as float64 when both are numbers (bools
// count, as in Python) and neither is a float above 2^53 in disguise.
func numbers(a, b Value) (float64, float64, bool) {
	x, ok1 := toNumber(a)
	y, ok2 := toNumber(b)
	return x, y, ok1 && ok2
}

func toNumber(v Value) (float64, bool) {
	switch x := v.(type) {
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// compare is Python's ordering for <, <=, >, >=: numbers, strings, and
// lists/tuples item by item; anything else is a TypeError.
func (r *renderer) compare(a, b Value) int {
	if x, ok := a.(int64); ok {
		if y, ok := b.(int64); ok {
			return cmpInt(x, y)
		}
	}
	if x, y, ok := numbers(a, b); ok {
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	}
	switch x := a.(type) {
	case string:
		if y, ok := b.(string); ok {
			return strings.Compare(x, y)
		}
	case *List:
		if y, ok := b.(*List); ok {
			for i := 0; i < len(x.Items) && i < len(y.Items); i++ {
				if !equal(x.Items[i], y.Items[i]) {
					return r.compare(x.Items[i], y.Items[i])
				}
			}
			return cmpInt(int64(len(x.Items)), int64(len(y.Items)))
		}
	}
	r.fail("'<' not supported between instances of '%s' and '%s'", typeName(a), typeName(b))
	return 0
}

func cmpInt(x, y int64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}
