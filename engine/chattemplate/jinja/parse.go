package jinja

import (
	"fmt"
	"slices"
)

// Parser: port of jinja2/parser.py's grammar (statements and the
// expression precedence ladder), limited to what chat templates use.
// Template inheritance, include/import and recursive loops are refused.

// maxParseDepth bounds nesting of blocks and expressions, so a hostile
// template cannot overflow the stack while being parsed.
const maxParseDepth = 200

type parser struct {
	toks  []token
	pos   int
	depth int
}

type parseError struct{ err error }

func (p *parser) fail(format string, args ...any) {
	panic(parseError{fmt.Errorf("template line %d: %s", p.cur().line, fmt.Sprintf(format, args...))})
}

func (p *parser) cur() token { return p.toks[p.pos] }

func (p *parser) next() token {
	t := p.toks[p.pos]
	if t.kind != tEOF {
		p.pos++
	}
	return t
}

func (p *parser) isOp(op string) bool { t := p.cur(); return t.kind == tOp && t.text == op }

func (p *parser) isName(name string) bool { t := p.cur(); return t.kind == tName && t.text == name }

func (p *parser) skipOp(op string) bool {
	if p.isOp(op) {
		p.pos++
		return true
	}
	return false
}

func (p *parser) skipName(name string) bool {
	if p.isName(name) {
		p.pos++
		return true
	}
	return false
}

func (p *parser) expectOp(op string) {
	if !p.skipOp(op) {
		p.fail("expected %q, found %s", op, describe(p.cur()))
	}
}

func (p *parser) expectName() string {
	t := p.cur()
	if t.kind != tName {
		p.fail("expected a name, found %s", describe(t))
	}
	p.pos++
	return t.text
}

func (p *parser) expectBlockEnd() {
	if p.cur().kind != tBlockEnd {
		p.fail("expected end of tag, found %s", describe(p.cur()))
	}
	p.pos++
}

func describe(t token) string {
	switch t.kind {
	case tEOF:
		return "end of template"
	case tBlockEnd, tVarEnd:
		return "end of tag"
	case tName, tOp:
		return fmt.Sprintf("%q", t.text)
	case tString:
		return "a string"
	}
	return "a literal"
}

func (p *parser) enter() {
	p.depth++
	if p.depth > maxParseDepth {
		p.fail("nesting deeper than %d", maxParseDepth)
	}
}

func (p *parser) leave() { p.depth-- }

func parseTemplate(toks []token) (nodes []node, err error) {
	defer func() {
		if r := recover(); r != nil {
			pe, ok := r.(parseError)
			if !ok {
				panic(r)
			}
			nodes, err = nil, pe.err
		}
	}()
	p := &parser{toks: toks}
	body, end := p.body()
	if end != "" {
		p.fail("unexpected {%% %s %%}", end)
	}
	return body, nil
}

// body parses nodes until EOF or a block tag named in ends; it returns the
// tag found (consumed up to its name).
func (p *parser) body(ends ...string) ([]node, string) {
	p.enter()
	defer p.leave()
	var out []node
	for {
		t := p.next()
		switch t.kind {
		case tEOF:
			if len(ends) > 0 {
				p.fail("missing {%% %s %%}", ends[len(ends)-1])
			}
			return out, ""
		case tText:
			out = append(out, &textNode{t.text})
		case tVarBegin:
			x := p.tupleOrExpr()
			if p.cur().kind != tVarEnd {
				p.fail("expected }}, found %s", describe(p.cur()))
			}
			p.pos++
			out = append(out, &outputNode{x: x, line: t.line})
		case tBlockBegin:
			name := p.expectName()
			if slices.Contains(ends, name) {
				return out, name
			}
			if n := p.statement(name, t.line); n != nil {
				out = append(out, n)
			}
		default:
			p.fail("unexpected %s", describe(t))
		}
	}
}

func (p *parser) statement(name string, line int) node {
	switch name {
	case "if":
		return p.ifStmt()
	case "for":
		return p.forStmt(line)
	case "set":
		return p.setStmt(line)
	case "macro":
		m := p.macroDef()
		return &macroNode{m}
	case "call":
		return p.callBlock(line)
	case "filter":
		f := p.filterChain()
		p.expectBlockEnd()
		body, _ := p.body("endfilter")
		p.expectBlockEnd()
		return &filterBlockNode{filters: f, body: body}
	case "with":
		w := &withNode{}
		for !p.isOp(")") && p.cur().kind != tBlockEnd {
			if len(w.names) > 0 {
				p.expectOp(",")
			}
			w.names = append(w.names, p.expectName())
			p.expectOp("=")
			w.vals = append(w.vals, p.expr())
		}
		p.expectBlockEnd()
		w.body, _ = p.body("endwith")
		p.expectBlockEnd()
		return w
	case "break", "continue":
		p.expectBlockEnd()
		return &loopCtlNode{brk: name == "break"}
	case "generation", "block":
		// HF's {% generation %} marks assistant text; rendering ignores it.
		if name == "block" {
			p.expectName()
		}
		p.expectBlockEnd()
		body, _ := p.body("end" + name)
		for p.cur().kind != tBlockEnd {
			p.next()
		}
		p.expectBlockEnd()
		return &withNode{body: body}
	}
	p.fail("unsupported tag {%% %s %%}", name)
	return nil
}

func (p *parser) ifStmt() node {
	n := &ifNode{}
	for {
		n.conds = append(n.conds, p.tupleOrExpr())
		p.expectBlockEnd()
		body, end := p.body("elif", "else", "endif")
		n.bodies = append(n.bodies, body)
		switch end {
		case "elif":
			continue
		case "else":
			p.expectBlockEnd()
			n.els, _ = p.body("endif")
		}
		p.expectBlockEnd()
		return n
	}
}

func (p *parser) forStmt(line int) node {
	n := &forNode{line: line, targets: p.targets()}
	if !p.skipName("in") {
		p.fail("expected 'in' in for loop")
	}
	n.iter = p.tupleOrExpr(true)
	if p.skipName("if") {
		n.cond = p.expr()
	}
	if p.isName("recursive") {
		p.fail("recursive loops are not supported")
	}
	p.expectBlockEnd()
	body, end := p.body("else", "endfor")
	n.body = body
	if end == "else" {
		p.expectBlockEnd()
		n.els, _ = p.body("endfor")
	}
	p.expectBlockEnd()
	return n
}

// targets parses "a" or "a, b" or "(a, b)".
func (p *parser) targets() []string {
	paren := p.skipOp("(")
	names := []string{p.expectName()}
	for p.skipOp(",") {
		if p.cur().kind != tName {
			break
		}
		names = append(names, p.expectName())
	}
	if paren {
		p.expectOp(")")
	}
	return names
}

func (p *parser) setStmt(line int) node {
	if p.cur().kind == tName && p.toks[p.pos+1].kind == tOp && p.toks[p.pos+1].text == "." {
		ns := p.expectName()
		p.expectOp(".")
		attr := p.expectName()
		p.expectOp("=")
		n := &setNode{nsVar: ns, nsAttr: attr, x: p.tupleOrExpr(), line: line}
		p.expectBlockEnd()
		return n
	}
	targets := p.targets()
	if p.skipOp("=") {
		n := &setNode{targets: targets, x: p.tupleOrExpr(), line: line}
		p.expectBlockEnd()
		return n
	}
	if len(targets) != 1 {
		p.fail("a block set takes one name")
	}
	var filters []*filterExpr
	if p.isOp("|") {
		filters = p.filterChain()
	}
	p.expectBlockEnd()
	body, _ := p.body("endset")
	p.expectBlockEnd()
	return &setBlockNode{target: targets[0], filters: filters, body: body}
}

// filterChain parses "| f(args) | g" (the leading | optional).
func (p *parser) filterChain() []*filterExpr {
	var out []*filterExpr
	p.skipOp("|")
	for {
		out = append(out, p.filterCall(nil))
		if !p.skipOp("|") {
			return out
		}
	}
}

func (p *parser) macroDef() *Macro {
	m := &Macro{name: p.expectName()}
	p.params(m)
	p.expectBlockEnd()
	m.body, _ = p.body("endmacro")
	for p.cur().kind == tName { // {% endmacro name %}
		p.next()
	}
	p.expectBlockEnd()
	return m
}

func (p *parser) params(m *Macro) {
	p.expectOp("(")
	for !p.skipOp(")") {
		if len(m.params) > 0 {
			p.expectOp(",")
		}
		m.params = append(m.params, p.expectName())
		var def expr
		if p.skipOp("=") {
			def = p.expr()
		}
		m.defaults = append(m.defaults, def)
	}
}

func (p *parser) callBlock(line int) node {
	caller := &Macro{name: "caller"}
	if p.isOp("(") {
		p.params(caller)
	}
	x := p.expr()
	call, ok := x.(*callExpr)
	if !ok {
		p.fail("{%% call %%} needs a macro call")
	}
	p.expectBlockEnd()
	caller.body, _ = p.body("endcall")
	p.expectBlockEnd()
	return &callBlockNode{call: call, m: caller, line: line}
}

// tupleOrExpr parses an expression, or an unparenthesised tuple "a, b".
func (p *parser) tupleOrExpr(noCond ...bool) expr {
	parse := p.expr
	if len(noCond) > 0 {
		parse = p.orExpr // "for x in y if z": the if is the loop filter
	}
	x := parse()
	if !p.isOp(",") {
		return x
	}
	items := []expr{x}
	for p.skipOp(",") {
		if p.cur().kind == tBlockEnd || p.cur().kind == tVarEnd || p.isOp(")") {
			break
		}
		items = append(items, parse())
	}
	return &listExpr{items: items, tuple: true}
}
