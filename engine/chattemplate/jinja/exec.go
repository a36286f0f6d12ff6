package jinja

import "strings"

// ctl says how a body ended: normally, or by {% break %} / {% continue %}.
type ctl uint8

const (
	ctlNone ctl = iota
	ctlBreak
	ctlContinue
)

func (r *renderer) execBody(nodes []node, sc *scope) ctl {
	for _, n := range nodes {
		r.tick()
		if c := r.exec(n, sc); c != ctlNone {
			return c
		}
	}
	return ctlNone
}

func (r *renderer) exec(n node, sc *scope) ctl {
	switch n := n.(type) {
	case *textNode:
		r.write(n.text)
	case *outputNode:
		r.write(r.str(r.eval(n.x, sc)))
	case *ifNode:
		for i, c := range n.conds {
			if truthy(r.eval(c, sc)) {
				return r.execBody(n.bodies[i], sc)
			}
		}
		return r.execBody(n.els, sc)
	case *forNode:
		r.execFor(n, sc)
	case *setNode:
		r.execSet(n, sc)
	case *setBlockNode:
		var v Value = r.capture1(n.body, sc)
		for _, f := range n.filters {
			v = r.filter(f, v, sc)
		}
		sc.set(n.target, v)
	case *macroNode:
		m := *n.m
		m.scope, sc.captured = sc, true
		sc.set(m.name, &m)
	case *callBlockNode:
		fn := r.eval(n.call.fn, sc)
		m, ok := fn.(*Macro)
		if !ok {
			r.fail("line %d: {%% call %%} needs a macro, got %s", n.line, typeName(fn))
		}
		caller := *n.m
		caller.scope, sc.captured = sc, true
		bound := *m
		bound.caller = &caller
		args, kw := r.args(n.call.args, n.call.kw, n.call.kwv, sc)
		r.write(r.callMacro(&bound, args, kw))
	case *filterBlockNode:
		var v Value = r.capture1(n.body, sc)
		for _, f := range n.filters {
			v = r.filter(f, v, sc)
		}
		r.write(r.str(v))
	case *withNode:
		inner := sc.child()
		for i, name := range n.names {
			inner.set(name, r.eval(n.vals[i], sc))
		}
		return r.execBody(n.body, inner)
	case *loopCtlNode:
		if n.brk {
			return ctlBreak
		}
		return ctlContinue
	}
	return ctlNone
}

// capture1 renders a body into a string instead of the output.
func (r *renderer) capture1(body []node, sc *scope) string {
	saved := r.out
	var b strings.Builder
	r.out = &b
	r.capture++
	defer func() { r.out = saved; r.capture-- }()
	r.execBody(body, sc)
	return b.String()
}

func (r *renderer) execSet(n *setNode, sc *scope) {
	v := r.eval(n.x, sc)
	if n.nsVar != "" {
		target, _ := sc.lookup(n.nsVar)
		ns, ok := target.(*Namespace)
		if !ok {
			r.fail("line %d: cannot set attribute %q of %s (only a namespace() can be assigned to)", n.line, n.nsAttr, typeName(target))
		}
		ns.attrs.Set(n.nsAttr, v)
		return
	}
	if len(n.targets) == 1 {
		sc.set(n.targets[0], v)
		return
	}
	items := r.unpack(v, len(n.targets), n.line)
	for i, name := range n.targets {
		sc.set(name, items[i])
	}
}

func (r *renderer) unpack(v Value, n, line int) []Value {
	l, ok := v.(*List)
	if !ok || len(l.Items) != n {
		r.fail("line %d: cannot unpack %s into %d names", line, typeName(v), n)
	}
	return l.Items
}

func (r *renderer) execFor(n *forNode, sc *scope) {
	items := r.iterate(r.eval(n.iter, sc), n.line)
	bind := func(s *scope, item Value) {
		if len(n.targets) == 1 {
			s.set(n.targets[0], item)
			return
		}
		for i, v := range r.unpack(item, len(n.targets), n.line) {
			s.set(n.targets[i], v)
		}
	}
	if n.cond != nil {
		kept := make([]Value, 0, len(items))
		for _, it := range items {
			r.tick()
			s := sc.child()
			bind(s, it)
			if truthy(r.eval(n.cond, s)) {
				kept = append(kept, it)
			}
		}
		items = kept
	}
	if len(items) == 0 {
		r.execBody(n.els, sc)
		return
	}
	// One scope serves every iteration (cleared in between: Jinja2 starts
	// each iteration afresh), unless a macro defined in the body kept it.
	loop := &loopObj{items: items}
	s := newScope(sc, 2+len(n.targets))
	for i, it := range items {
		r.tick()
		if s.captured {
			s = newScope(sc, 2+len(n.targets))
		} else if i > 0 {
			s.reset()
		}
		bind(s, it)
		loop.i = i
		s.set("loop", loop)
		if r.execBody(n.body, s) == ctlBreak {
			break
		}
	}
}

// iterate lists what a for loop walks: list items, dict keys, characters.
func (r *renderer) iterate(v Value, line int) []Value {
	switch x := v.(type) {
	case *List:
		return x.Items
	case *Dict:
		return x.keys
	case string:
		out := make([]Value, 0, len(x))
		r.charge(int64(16 * len(x)))
		for _, c := range x {
			out = append(out, string(c))
		}
		return out
	case Undefined:
		return nil
	}
	r.fail("line %d: %s is not iterable", line, typeName(v))
	return nil
}

// loopObj is the "loop" variable of a for loop.
type loopObj struct {
	items []Value
	i     int
}

func (l *loopObj) attr(r *renderer, name string) Value {
	n := len(l.items)
	switch name {
	case "index":
		return int64(l.i + 1)
	case "index0":
		return int64(l.i)
	case "revindex":
		return int64(n - l.i)
	case "revindex0":
		return int64(n - l.i - 1)
	case "first":
		return l.i == 0
	case "last":
		return l.i == n-1
	case "length":
		return int64(n)
	case "depth":
		return int64(1)
	case "depth0":
		return int64(0)
	case "previtem":
		if l.i > 0 {
			return l.items[l.i-1]
		}
		return Undefined{Name: "previtem"}
	case "nextitem":
		if l.i+1 < n {
			return l.items[l.i+1]
		}
		return Undefined{Name: "nextitem"}
	case "cycle":
		i := l.i
		return &Func{Name: "cycle", Fn: func(r *renderer, args []Value, kw *Dict) Value {
			if len(args) == 0 {
				r.fail("loop.cycle() needs at least one value")
			}
			return args[i%len(args)]
		}}
	}
	return Undefined{Name: name}
}

// callMacro runs a macro with its own scope and returns its output.
func (r *renderer) callMacro(m *Macro, args []Value, kw *Dict) string {
	r.depth++
	if r.depth > r.lim.Depth {
		r.limit("macros nested more than %d deep (a macro that calls itself?)", r.lim.Depth)
	}
	defer func() { r.depth-- }()
	s := newScope(m.scope, len(m.params)+3)
	var extra []Value
	for i, a := range args {
		if i < len(m.params) {
			s.set(m.params[i], a)
		} else {
			extra = append(extra, a)
		}
	}
	kwargs := NewDict()
	if kw != nil {
		for i, k := range kw.keys {
			name, _ := k.(string)
			if idx := indexOf(m.params, name); idx >= 0 {
				if idx < len(args) {
					r.fail("macro %s got multiple values for %q", m.name, name)
				}
				s.set(name, kw.vals[i])
			} else {
				kwargs.Set(name, kw.vals[i])
			}
		}
	}
	for i, p := range m.params {
		if _, ok := s.local(p); ok {
			continue
		}
		if m.defaults[i] != nil {
			s.set(p, r.eval(m.defaults[i], s))
		} else {
			s.set(p, Undefined{Name: p})
		}
	}
	s.set("varargs", &List{Items: extra, Tuple: true})
	s.set("kwargs", kwargs)
	if m.caller != nil {
		s.set("caller", m.caller)
	}
	return r.capture1(m.body, s)
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}
