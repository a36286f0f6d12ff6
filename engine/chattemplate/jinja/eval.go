package jinja

import (
	"math"
	"strings"
	"unicode/utf8"
)

func (r *renderer) eval(x expr, sc *scope) Value {
	switch x := x.(type) {
	case *constExpr:
		return x.v
	case *nameExpr:
		if v, ok := sc.lookup(x.name); ok {
			return v
		}
		return Undefined{Name: x.name}
	case *listExpr:
		r.charge(int64(16 * len(x.items)))
		items := make([]Value, len(x.items))
		for i, it := range x.items {
			items[i] = r.eval(it, sc)
		}
		return &List{Items: items, Tuple: x.tuple}
	case *dictExpr:
		d := NewDict()
		r.charge(int64(32 * len(x.keys)))
		for i, k := range x.keys {
			d.Set(r.hashable(r.eval(k, sc)), r.eval(x.vals[i], sc))
		}
		return d
	case *attrExpr:
		return r.getattr(r.eval(x.x, sc), x.name, x.line)
	case *itemExpr:
		return r.getitem(r.eval(x.x, sc), r.eval(x.key, sc), x.line)
	case *sliceExpr:
		return r.slice(x, sc)
	case *callExpr:
		r.tick()
		fn := r.eval(x.fn, sc)
		args, kw := r.args(x.args, x.kw, x.kwv, sc)
		return r.call(fn, args, kw, x.line)
	case *filterExpr:
		return r.filter(x, r.eval(x.x, sc), sc)
	case *testExpr:
		return r.test(x, sc)
	case *unaryExpr:
		v := r.eval(x.x, sc)
		switch x.op {
		case "not":
			return !truthy(v)
		case "-":
			switch n := v.(type) {
			case int64:
				if n == math.MinInt64 {
					r.fail("integer overflow")
				}
				return -n
			case float64:
				return -n
			case bool:
				if n {
					return int64(-1)
				}
				return int64(0)
			}
			r.fail("bad operand type for unary -: '%s'", typeName(v))
		default:
			if _, ok := toNumber(v); !ok {
				r.fail("bad operand type for unary +: '%s'", typeName(v))
			}
			return v
		}
	case *binExpr:
		switch x.op {
		case "and":
			if l := r.eval(x.l, sc); !truthy(l) {
				return l
			}
			return r.eval(x.r, sc)
		case "or":
			if l := r.eval(x.l, sc); truthy(l) {
				return l
			}
			return r.eval(x.r, sc)
		case "~":
			a, b := r.str(r.eval(x.l, sc)), r.str(r.eval(x.r, sc))
			r.newString(int64(len(a) + len(b)))
			return a + b
		}
		return r.arith(x.op, r.eval(x.l, sc), r.eval(x.r, sc), x.line)
	case *compareExpr:
		left := r.eval(x.first, sc)
		for i, op := range x.ops {
			right := r.eval(x.rest[i], sc)
			if !r.compareOp(op, left, right, x.line) {
				return false
			}
			left = right
		}
		return true
	case *condExpr:
		if truthy(r.eval(x.cond, sc)) {
			return r.eval(x.yes, sc)
		}
		if x.no == nil {
			return Undefined{}
		}
		return r.eval(x.no, sc)
	}
	r.fail("unknown expression %T", x)
	return nil
}

// hashable checks that a value can be a dict key.
func (r *renderer) hashable(k Value) Value {
	switch k.(type) {
	case nil, bool, int64, float64, string:
		return k
	}
	r.fail("unhashable type: '%s'", typeName(k))
	return nil
}

func (r *renderer) args(pos []expr, kwNames []string, kwVals []expr, sc *scope) ([]Value, *Dict) {
	args := make([]Value, len(pos))
	for i, a := range pos {
		args[i] = r.eval(a, sc)
	}
	if len(kwNames) == 0 {
		return args, nil
	}
	kw := NewDict()
	for i, k := range kwNames {
		kw.Set(k, r.eval(kwVals[i], sc))
	}
	return args, kw
}

func (r *renderer) call(fn Value, args []Value, kw *Dict, line int) Value {
	switch f := fn.(type) {
	case *Macro:
		return r.callMacro(f, args, kw)
	case *Func:
		return f.Fn(r, args, kw)
	case Undefined:
		r.fail("line %d: '%s' is undefined", line, f.Name)
	}
	r.fail("line %d: '%s' object is not callable", line, typeName(fn))
	return nil
}

// getattr is Jinja2's environment.getattr: attributes (methods) first, then
// items.
func (r *renderer) getattr(obj Value, name string, line int) Value {
	switch o := obj.(type) {
	case Undefined:
		r.fail("line %d: '%s' is undefined (reading .%s)", line, undefName(o), name)
	case *Dict:
		if m := dictMethod(o, name); m != nil {
			return m
		}
		if v, ok := o.Get(name); ok {
			return v
		}
	case string:
		if m := strMethod(o, name); m != nil {
			return m
		}
	case *List:
		if m := listMethod(o, name); m != nil {
			return m
		}
	case *Namespace:
		if v, ok := o.attrs.Get(name); ok {
			return v
		}
	case *loopObj:
		return o.attr(r, name)
	}
	return Undefined{Name: name}
}

func undefName(u Undefined) string {
	if u.Name == "" {
		return "value"
	}
	return u.Name
}

// getitem is Jinja2's environment.getitem: items first, then attributes.
func (r *renderer) getitem(obj, key Value, line int) Value {
	switch o := obj.(type) {
	case Undefined:
		r.fail("line %d: '%s' is undefined (reading [%s])", line, undefName(o), r.str(key))
	case *Dict:
		if k, ok := key.(*List); ok {
			r.fail("line %d: unhashable type: '%s'", line, typeName(k))
		}
		if v, ok := o.Get(key); ok {
			return v
		}
	case *List:
		if i, ok := index(key, len(o.Items)); ok {
			return o.Items[i]
		}
		if _, ok := key.(string); !ok {
			return Undefined{}
		}
	case string:
		if _, ok := key.(string); !ok {
			runes := []rune(o)
			if i, ok := index(key, len(runes)); ok {
				return string(runes[i])
			}
			return Undefined{}
		}
	}
	if s, ok := key.(string); ok {
		return r.getattr(obj, s, line)
	}
	return Undefined{}
}

// index resolves a Python index (negative from the end).
func index(key Value, n int) (int, bool) {
	var i int64
	switch k := key.(type) {
	case int64:
		i = k
	case bool:
		if k {
			i = 1
		}
	default:
		return 0, false
	}
	if i < 0 {
		i += int64(n)
	}
	return int(i), i >= 0 && i < int64(n)
}

func (r *renderer) slice(x *sliceExpr, sc *scope) Value {
	obj := r.eval(x.x, sc)
	part := func(e expr) (int64, bool) {
		if e == nil {
			return 0, false
		}
		v := r.eval(e, sc)
		if v == nil {
			return 0, false
		}
		n, ok := v.(int64)
		if !ok {
			r.fail("slice indices must be integers or None")
		}
		return n, true
	}
	start, hasStart := part(x.start)
	stop, hasStop := part(x.stop)
	step, hasStep := part(x.stp)
	if !hasStep {
		step = 1
	}
	if step == 0 {
		r.fail("slice step cannot be zero")
	}
	pick := func(n int) []int {
		lo, hi := sliceBounds(start, hasStart, stop, hasStop, step, n)
		count := 0
		if step > 0 && hi > lo {
			count = (hi - lo + int(step) - 1) / int(step)
		} else if step < 0 && lo > hi {
			count = (lo - hi - int(step) - 1) / int(-step)
		}
		r.charge(int64(8 * count))
		idx := make([]int, 0, count)
		for i := lo; (step > 0 && i < hi) || (step < 0 && i > hi); i += int(step) {
			idx = append(idx, i)
		}
		return idx
	}
	switch o := obj.(type) {
	case *List:
		idx := pick(len(o.Items))
		r.charge(int64(16 * len(idx)))
		out := make([]Value, len(idx))
		for j, i := range idx {
			out[j] = o.Items[i]
		}
		return &List{Items: out, Tuple: o.Tuple}
	case string:
		runes := []rune(o)
		idx := pick(len(runes))
		r.charge(int64(4 * len(idx)))
		var b strings.Builder
		for _, i := range idx {
			b.WriteRune(runes[i])
		}
		return b.String()
	case Undefined:
		r.fail("'%s' is undefined (slicing)", undefName(o))
	}
	return Undefined{}
}

// sliceBounds is Python's slice.indices.
func sliceBounds(start int64, hasStart bool, stop int64, hasStop bool, step int64, n int) (int, int) {
	ln := int64(n)
	clamp := func(v, lo, hi int64) int64 { return max(lo, min(v, hi)) }
	var lo, hi int64
	if step > 0 {
		lo, hi = 0, ln
		if hasStart {
			if start < 0 {
				start += ln
			}
			lo = clamp(start, 0, ln)
		}
		if hasStop {
			if stop < 0 {
				stop += ln
			}
			hi = clamp(stop, 0, ln)
		}
	} else {
		lo, hi = ln-1, -1
		if hasStart {
			if start < 0 {
				start += ln
			}
			lo = clamp(start, -1, ln-1)
		}
		if hasStop {
			if stop < 0 {
				stop += ln
			}
			hi = clamp(stop, -1, ln-1)
		}
	}
	return int(lo), int(hi)
}

// runeLen is len() of a Python str.
func runeLen(s string) int { return utf8.RuneCountInString(s) }
