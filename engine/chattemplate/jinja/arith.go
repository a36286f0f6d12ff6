package jinja

import (
	"math"
	"strings"
)

// Python arithmetic, comparison and membership.

func (r *renderer) compareOp(op string, a, b Value, line int) bool {
	switch op {
	case "==":
		return equal(a, b)
	case "!=":
		return !equal(a, b)
	case "in":
		return r.contains(b, a, line)
	case "notin":
		return !r.contains(b, a, line)
	}
	c := r.compare(a, b)
	switch op {
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	}
	return c >= 0
}

// contains is Python's "x in container".
func (r *renderer) contains(container, x Value, line int) bool {
	switch c := container.(type) {
	case string:
		s, ok := x.(string)
		if !ok {
			r.fail("line %d: 'in <string>' requires string as left operand, not %s", line, typeName(x))
		}
		return strings.Contains(c, s)
	case *List:
		for _, it := range c.Items {
			if equal(it, x) {
				return true
			}
		}
		return false
	case *Dict:
		_, ok := c.Get(x)
		return ok
	case *Namespace:
		s, _ := x.(string)
		_, ok := c.attrs.Get(s)
		return ok
	case Undefined:
		return false
	}
	r.fail("line %d: argument of type '%s' is not iterable", line, typeName(container))
	return false
}

func (r *renderer) arith(op string, a, b Value, line int) Value {
	if x, ok := a.(int64); ok {
		if y, ok := b.(int64); ok {
			return r.intArith(op, x, y, line)
		}
	}
	if x, y, ok := numbers(a, b); ok {
		if _, aBool := a.(bool); aBool {
			if _, bBool := b.(bool); bBool {
				return r.intArith(op, int64(x), int64(y), line)
			}
		}
		return r.floatArith(op, x, y, line)
	}
	switch op {
	case "+":
		switch x := a.(type) {
		case string:
			if y, ok := b.(string); ok {
				r.newString(int64(len(x) + len(y)))
				return x + y
			}
		case *List:
			if y, ok := b.(*List); ok && x.Tuple == y.Tuple {
				r.charge(int64(16 * (len(x.Items) + len(y.Items))))
				items := append(append(make([]Value, 0, len(x.Items)+len(y.Items)), x.Items...), y.Items...)
				return &List{Items: items, Tuple: x.Tuple}
			}
		}
	case "*":
		if n, ok := b.(int64); ok {
			return r.repeat(a, n, line)
		}
		if n, ok := a.(int64); ok {
			return r.repeat(b, n, line)
		}
	case "%":
		if f, ok := a.(string); ok {
			return r.printf(f, b)
		}
	}
	r.fail("line %d: unsupported operand type(s) for %s: '%s' and '%s'", line, op, typeName(a), typeName(b))
	return nil
}

// repeat is str * n and list * n, charged before anything is built.
func (r *renderer) repeat(v Value, n int64, line int) Value {
	n = max(n, 0)
	switch x := v.(type) {
	case string:
		if len(x) > 0 && n > int64(r.lim.Output)/int64(len(x)) {
			r.limit("line %d: string repeated %d times", line, n)
		}
		r.newString(int64(len(x)) * n)
		return strings.Repeat(x, int(n))
	case *List:
		if len(x.Items) > 0 && n > (r.lim.Alloc-r.alloc)/int64(16*len(x.Items)) {
			r.limit("line %d: list repeated %d times", line, n)
		}
		r.charge(int64(16*len(x.Items)) * n)
		items := make([]Value, 0, len(x.Items)*int(n))
		for range n {
			items = append(items, x.Items...)
		}
		return &List{Items: items, Tuple: x.Tuple}
	}
	r.fail("line %d: can't multiply sequence of type '%s'", line, typeName(v))
	return nil
}

func (r *renderer) intArith(op string, x, y int64, line int) Value {
	overflow := func() { r.fail("line %d: integer overflow in %d %s %d", line, x, op, y) }
	switch op {
	case "+":
		s := x + y
		if (s > x) != (y > 0) {
			overflow()
		}
		return s
	case "-":
		s := x - y
		if (s < x) != (y > 0) {
			overflow()
		}
		return s
	case "*":
		if x != 0 && y != 0 {
			p := x * y
			if p/y != x || (x == -1 && y == math.MinInt64) || (y == -1 && x == math.MinInt64) {
				overflow()
			}
			return p
		}
		return int64(0)
	case "/":
		if y == 0 {
			r.fail("line %d: division by zero", line)
		}
		return float64(x) / float64(y)
	case "//", "%":
		if y == 0 {
			r.fail("line %d: integer division or modulo by zero", line)
		}
		q, m := x/y, x%y
		if m != 0 && (m < 0) != (y < 0) { // Python floors toward -inf
			q--
			m += y
		}
		if op == "//" {
			return q
		}
		return m
	case "**":
		switch {
		case y < 0:
			return math.Pow(float64(x), float64(y))
		case y == 0 || x == 1:
			return int64(1)
		case x == 0:
			return int64(0)
		case x == -1:
			return int64(1 - 2*(y&1))
		}
		result := int64(1) // |x| >= 2: overflows within 63 rounds
		for range y {
			p := result * x
			if p/x != result {
				overflow()
			}
			result = p
		}
		return result
	}
	r.fail("line %d: bad operator %s", line, op)
	return nil
}

func (r *renderer) floatArith(op string, x, y float64, line int) Value {
	switch op {
	case "+":
		return x + y
	case "-":
		return x - y
	case "*":
		return x * y
	case "/":
		if y == 0 {
			r.fail("line %d: float division by zero", line)
		}
		return x / y
	case "//", "%":
		if y == 0 {
			r.fail("line %d: float modulo by zero", line)
		}
		m := math.Mod(x, y)
		if m != 0 && (m < 0) != (y < 0) {
			m += y
		}
		if op == "%" {
			return m
		}
		return math.Floor((x - m) / y)
	case "**":
		return math.Pow(x, y)
	}
	r.fail("line %d: bad operator %s", line, op)
	return nil
}
