package jinja

import (
	"math"
	"strings"
	"unicode"
)

// Jinja2's built-in tests (jinja2/tests.py).

func (r *renderer) test(t *testExpr, sc *scope) Value {
	v := r.eval(t.x, sc)
	args := make([]Value, len(t.args))
	for i, a := range t.args {
		args[i] = r.eval(a, sc)
	}
	return r.runTest(t.name, v, args, t.line) != t.negate
}

func (r *renderer) runTest(name string, v Value, args []Value, line int) bool {
	r.tick()
	need := func(n int) {
		if len(args) < n {
			r.fail("line %d: test %q needs %d argument(s)", line, name, n)
		}
	}
	switch name {
	case "defined":
		_, u := v.(Undefined)
		return !u
	case "undefined":
		_, u := v.(Undefined)
		return u
	case "none":
		return v == nil
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "true":
		b, ok := v.(bool)
		return ok && b
	case "false":
		b, ok := v.(bool)
		return ok && !b
	case "integer":
		_, ok := v.(int64)
		return ok
	case "float":
		_, ok := v.(float64)
		return ok
	case "number":
		_, ok := toNumber(v)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "mapping":
		_, ok := v.(*Dict)
		return ok
	case "sequence":
		switch v.(type) {
		case string, *List, *Dict:
			return true
		}
		return false
	case "iterable":
		switch v.(type) {
		case string, *List, *Dict, Undefined:
			return true
		}
		return false
	case "callable":
		switch v.(type) {
		case *Macro, *Func:
			return true
		}
		return false
	case "odd", "even":
		n, ok := v.(int64)
		if !ok {
			f, isF := v.(float64)
			if !isF || f != math.Trunc(f) {
				r.fail("line %d: test %q needs an integer", line, name)
			}
			n = int64(f)
		}
		return (n%2 != 0) == (name == "odd")
	case "divisibleby":
		need(1)
		d, ok1 := toNumber(args[0])
		x, ok2 := toNumber(v)
		if !ok1 || !ok2 || d == 0 {
			r.fail("line %d: divisibleby needs numbers and a non-zero divisor", line)
		}
		return math.Mod(x, d) == 0
	case "eq", "equalto", "==":
		need(1)
		return equal(v, args[0])
	case "ne", "!=":
		need(1)
		return !equal(v, args[0])
	case "lt", "lessthan", "<":
		need(1)
		return r.compare(v, args[0]) < 0
	case "le", "<=":
		need(1)
		return r.compare(v, args[0]) <= 0
	case "gt", "greaterthan", ">":
		need(1)
		return r.compare(v, args[0]) > 0
	case "ge", ">=":
		need(1)
		return r.compare(v, args[0]) >= 0
	case "in":
		need(1)
		return r.contains(args[0], v, line)
	case "sameas":
		need(1)
		switch v.(type) {
		case nil, bool:
			return v == args[0]
		case *List, *Dict, *Namespace, *Macro, *Func:
			return v == args[0]
		}
		return false
	case "lower", "upper":
		s, ok := v.(string)
		if !ok {
			return false
		}
		if name == "lower" {
			return s == strings.ToLower(s) && strings.IndexFunc(s, unicode.IsLower) >= 0
		}
		return s == strings.ToUpper(s) && strings.IndexFunc(s, unicode.IsUpper) >= 0
	case "escaped":
		return false
	case "filter":
		_, ok := filters[r.str(v)]
		return ok
	case "test":
		return knownTests[r.str(v)]
	}
	r.fail("line %d: no test named %q", line, name)
	return false
}

var knownTests = map[string]bool{}

func init() {
	for _, n := range strings.Fields(`defined undefined none boolean true false integer float number string mapping
		sequence iterable callable odd even divisibleby eq equalto == ne != lt lessthan < le <= gt greaterthan >
		ge >= in sameas lower upper escaped filter test`) {
		knownTests[n] = true
	}
}
