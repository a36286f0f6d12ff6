// Package grammar constrains generation to a JSON Schema: a schema compiles
// to a grammar, the grammar runs byte by byte over the tokenizer's pieces,
// and a Constraint gives the mask of tokens allowed next, advanced one
// token at a time.
//
// Output is compact JSON (no whitespace at all); an object's properties
// come in any order (object.go). Gemma-4 tool calls (toolcall.go) use the
// same grammar in the model's own syntax, arguments in the template's
// sorted order.
//
// Data flows one way: a schema (or a tool list) in, a Grammar, then per
// token a mask out and the token back in (Constraint.Advance); patterns,
// formats and string enums are compiled by engine/grammar/regex, whose
// DFAs the string matcher steps.
//
// Design notes (after llguidance and XGrammar, no code taken): the matcher
// keeps a set of immutable stacks so a mask tries each token from one
// state; the vocabulary is a byte trie walked once per mask, pruned at the
// first byte no stack takes; regexes run as lazily built DFAs. Inside a
// string, plain tokens come from precomputed bitsets (per remaining length,
// and per regex DFA state, computed once by a walk pruned by UTF-8 lead
// byte and cut short where the state loops), and the few other tokens are
// walked once per reading and kept (constraint.go).
package grammar

import (
	"encoding/json"
	"fmt"
	"math"
	"perch/engine/grammar/regex"
	"strconv"
	"strings"
	"time"
)

// Grammar is a compiled schema. It is not safe for concurrent use (its
// DFAs grow on demand); compile one per request.
type Grammar struct {
	root  *node
	tool  bool   // Gemma-4 call syntax
	quote []byte // string delimiter: `"`, or the <|"|> token's bytes
	null  []byte // "null", or "None" as the Gemma-4 template renders it
	calls *callSet
	nodes int
	// plainCache holds plainFor's sets by regex state.
	plainCache map[dfaState][]uint64
	// CompileTime is how long Compile took.
	CompileTime time.Duration
}

// Compile compiles a JSON Schema for a JSON answer.
func Compile(schema []byte) (*Grammar, error) {
	start := time.Now()
	g := &Grammar{quote: []byte(`"`), null: []byte("null")}
	root, nodes, err := compileSchema(schema)
	if err != nil {
		return nil, err
	}
	if err := g.finish(root, nodes); err != nil {
		return nil, err
	}
	g.CompileTime = time.Since(start)
	return g, nil
}

// finish prepares compiled nodes for matching and checks the root can end.
func (g *Grammar) finish(root *node, nodes []*node) error {
	g.root = root
	g.nodes = len(nodes)
	for _, n := range nodes {
		g.prepare(n)
	}
	markLive(nodes)
	for _, n := range nodes {
		if n.enum {
			g.enumValues(n)
		}
	}
	markLive(nodes)
	if !root.productive {
		return &CompileError{Msg: "no finite JSON value matches the schema (a contradiction, or a recursive $ref with no base case)"}
	}
	return nil
}

// prepare builds keys and name tries.
func (g *Grammar) prepare(n *node) {
	if n.props == nil {
		return
	}
	if g.tool {
		n.props = sortedProps(n.props)
	}
	n.names = newLitTrie()
	for i := range n.props {
		p := &n.props[i]
		n.names.add([]byte(p.name))
		p.key = append(appendString(nil, p.name), ':')
		p.bareKey = append([]byte(p.name), ':')
		if p.name == "" {
			p.bareKey = nil
		}
	}
	if !g.tool {
		prepareAnyOrder(n)
	}
}

// markLive runs markProductive and records it where objects need it.
func markLive(nodes []*node) {
	markProductive(nodes)
	for _, n := range nodes {
		if n.any != nil {
			n.any.setLive(n)
		}
	}
}

// enumValues keeps the enum's values that the node's other keywords allow
// and builds their matchers.
func (g *Grammar) enumValues(n *node) {
	check := *n
	check.enum = false
	check.productive = true
	var strs []string
	n.lits, n.enumRe, n.filtered = nil, nil, true
	for _, v := range n.enumVals {
		if s, ok := v.(string); ok {
			if g.accepts(&check, g.literal(nil, v)) {
				strs = append(strs, s)
			}
			continue
		}
		for _, lit := range g.spellings(v) {
			if g.accepts(&check, lit) {
				if n.lits == nil {
					n.lits = newLitTrie()
				}
				n.lits.add(lit)
			}
		}
	}
	if strs != nil {
		if re, err := regex.Literals(strs); err == nil {
			n.enumRe = regex.NewDFA(re)
		}
	}
}

// spellings are the ways an enum value is written: as given, and an
// integral number also as an integer and with ".0" (2.0 and 2 are the same
// JSON Schema value).
func (g *Grammar) spellings(v any) [][]byte {
	out := [][]byte{g.literal(nil, v)}
	num, ok := v.(json.Number)
	if !ok {
		return out
	}
	f, err := num.Float64()
	if err != nil || f != math.Trunc(f) || math.Abs(f) >= 1<<53 {
		return out
	}
	whole := strconv.FormatInt(int64(f), 10)
	if f == 0 && strings.HasPrefix(string(num), "-") {
		whole = "-0"
	}
	for _, s := range []string{whole, whole + ".0"} {
		if s != string(num) {
			out = append(out, []byte(s))
		}
	}
	return out
}

// literal writes v in the grammar's syntax.
func (g *Grammar) literal(buf []byte, v any) []byte {
	if !g.tool {
		return compactJSON(buf, v)
	}
	switch x := v.(type) {
	case nil:
		return append(buf, g.null...)
	case string:
		buf = append(buf, g.quote...)
		buf = append(buf, x...)
		return append(buf, g.quote...)
	case []any:
		buf = append(buf, '[')
		for i, e := range x {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = g.literal(buf, e)
		}
		return append(buf, ']')
	case *object:
		var ps []prop
		for _, k := range x.keys {
			ps = append(ps, prop{name: k})
		}
		buf = append(buf, '{')
		for i, p := range sortedProps(ps) {
			if i > 0 {
				buf = append(buf, ',')
			}
			v, _ := x.get(p.name)
			buf = append(append(buf, p.name...), ':')
			buf = g.literal(buf, v)
		}
		return append(buf, '}')
	}
	return compactJSON(buf, v)
}

// accepts runs bytes through a fresh matcher for n.
func (g *Grammar) accepts(n *node, b []byte) bool {
	m := &matcher{g: g}
	states := []*stack{{f: frame{k: fValue, n: n}}}
	for _, c := range b {
		var next []*stack
		for _, s := range states {
			next = m.step(s, c, next)
		}
		if len(next) == 0 {
			return false
		}
		states = next
	}
	for _, s := range states {
		if m.canEnd(s) {
			return true
		}
	}
	return false
}

// markProductive finds the nodes some finite value matches (a fixpoint:
// recursion with no base case never becomes productive).
func markProductive(nodes []*node) {
	for _, n := range nodes {
		if n != anythingShared {
			n.productive = false
		}
	}
	for changed := true; changed; {
		changed = false
		for _, n := range nodes {
			if !n.productive && productiveNow(n) {
				n.productive, changed = true, true
			}
		}
	}
}

func productiveNow(n *node) bool {
	if n.anyOf != nil {
		for _, a := range n.anyOf {
			if a.productive {
				return true
			}
		}
		return false
	}
	if n.enum {
		if !n.filtered {
			return len(n.enumVals) > 0
		}
		return n.lits != nil || n.enumRe != nil
	}
	t := n.types
	if t&(tNull|tBool) != 0 {
		return true
	}
	if t&(tInt|tFrac) != 0 && (!n.hasMin || !n.hasMax || inBounds(n, n.min, true, n.max, true)) {
		return true
	}
	if t&tStr != 0 && (n.maxLen < 0 || n.minLen <= n.maxLen) {
		return true
	}
	if t&tArr != 0 && (n.maxItems < 0 || n.minItems <= n.maxItems) {
		ok := true
		for i := 0; i < n.minItems && ok; i++ {
			ok = itemAt(n, i).productive
		}
		if ok {
			return true
		}
	}
	if t&tObj != 0 {
		req := 0
		for _, p := range n.props {
			if p.required {
				req++
				if !p.n.productive {
					return false
				}
			}
		}
		return n.maxProps < 0 || req <= n.maxProps
	}
	return false
}

// Describe is a one-line summary for logs.
func (g *Grammar) Describe() string {
	kind := "json"
	if g.tool {
		kind = "tool calls"
	}
	return fmt.Sprintf("%s grammar, %d subschemas", kind, g.nodes)
}

// Validate reports whether instance (JSON text, as given) is accepted
// byte for byte by the grammar.
func (g *Grammar) Validate(instance []byte) bool {
	return g.accepts(g.root, instance)
}

// Canonical re-serializes JSON text compactly with keys in their order, the
// form the grammar produces.
func Canonical(data []byte) ([]byte, error) {
	v, err := parseJSON(data, 1000)
	if err != nil {
		return nil, err
	}
	return compactJSON(nil, v), nil
}
