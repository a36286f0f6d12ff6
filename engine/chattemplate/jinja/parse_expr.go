package jinja

// expr parses a conditional expression: or_expr [if or_expr [else expr]].
func (p *parser) expr() expr {
	p.enter()
	defer p.leave()
	x := p.orExpr()
	for p.skipName("if") {
		c := &condExpr{cond: p.orExpr(), yes: x}
		if p.skipName("else") {
			c.no = p.expr()
		}
		x = c
	}
	return x
}

func (p *parser) orExpr() expr {
	x := p.andExpr()
	for p.isName("or") {
		line := p.next().line
		x = &binExpr{op: "or", l: x, r: p.andExpr(), line: line}
	}
	return x
}

func (p *parser) andExpr() expr {
	x := p.notExpr()
	for p.isName("and") {
		line := p.next().line
		x = &binExpr{op: "and", l: x, r: p.notExpr(), line: line}
	}
	return x
}

func (p *parser) notExpr() expr {
	if p.skipName("not") {
		p.enter()
		defer p.leave()
		return &unaryExpr{op: "not", x: p.notExpr()}
	}
	return p.compare()
}

func (p *parser) compare() expr {
	first := p.math1()
	c := &compareExpr{first: first, line: p.cur().line}
	for {
		t := p.cur()
		switch {
		case t.kind == tOp && (t.text == "==" || t.text == "!=" || t.text == "<" || t.text == "<=" || t.text == ">" || t.text == ">="):
			p.next()
			c.ops = append(c.ops, t.text)
		case p.isName("in"):
			p.next()
			c.ops = append(c.ops, "in")
		case p.isName("not") && p.toks[p.pos+1].kind == tName && p.toks[p.pos+1].text == "in":
			p.pos += 2
			c.ops = append(c.ops, "notin")
		default:
			if len(c.ops) == 0 {
				return first
			}
			return c
		}
		c.rest = append(c.rest, p.math1())
	}
}

func (p *parser) math1() expr {
	x := p.concat()
	for p.isOp("+") || p.isOp("-") {
		t := p.next()
		x = &binExpr{op: t.text, l: x, r: p.concat(), line: t.line}
	}
	return x
}

func (p *parser) concat() expr {
	x := p.math2()
	for p.isOp("~") {
		t := p.next()
		x = &binExpr{op: "~", l: x, r: p.math2(), line: t.line}
	}
	return x
}

func (p *parser) math2() expr {
	x := p.pow()
	for p.isOp("*") || p.isOp("/") || p.isOp("//") || p.isOp("%") {
		t := p.next()
		x = &binExpr{op: t.text, l: x, r: p.pow(), line: t.line}
	}
	return x
}

func (p *parser) pow() expr {
	x := p.unary(true)
	for p.isOp("**") {
		t := p.next()
		x = &binExpr{op: "**", l: x, r: p.unary(true), line: t.line}
	}
	return x
}

// unary: as in Jinja2, "-x|f" is f(-x) and "-x.y" is -(x.y).
func (p *parser) unary(withFilter bool) expr {
	p.enter()
	defer p.leave()
	var x expr
	switch {
	case p.isOp("-"):
		p.next()
		x = &unaryExpr{op: "-", x: p.unary(false)}
	case p.isOp("+"):
		p.next()
		x = &unaryExpr{op: "+", x: p.unary(false)}
	default:
		x = p.primary()
	}
	x = p.postfix(x)
	if withFilter {
		x = p.filterTests(x)
	}
	return x
}

func (p *parser) primary() expr {
	t := p.next()
	switch t.kind {
	case tName:
		switch t.text {
		case "true", "True":
			return &constExpr{true}
		case "false", "False":
			return &constExpr{false}
		case "none", "None":
			return &constExpr{nil}
		}
		return &nameExpr{name: t.text, line: t.line}
	case tString:
		s := t.val.(string)
		for p.cur().kind == tString { // adjacent literals concatenate
			s += p.next().val.(string)
		}
		return &constExpr{s}
	case tInt, tFloat:
		return &constExpr{t.val}
	case tOp:
		switch t.text {
		case "(":
			if p.skipOp(")") {
				return &listExpr{tuple: true}
			}
			x := p.expr()
			if p.isOp(",") {
				items := []expr{x}
				for p.skipOp(",") && !p.isOp(")") {
					items = append(items, p.expr())
				}
				x = &listExpr{items: items, tuple: true}
			}
			p.expectOp(")")
			return x
		case "[":
			l := &listExpr{}
			for !p.skipOp("]") {
				if len(l.items) > 0 {
					p.expectOp(",")
					if p.skipOp("]") {
						break
					}
				}
				l.items = append(l.items, p.expr())
			}
			return l
		case "{":
			d := &dictExpr{}
			for !p.skipOp("}") {
				if len(d.keys) > 0 {
					p.expectOp(",")
					if p.skipOp("}") {
						break
					}
				}
				d.keys = append(d.keys, p.expr())
				p.expectOp(":")
				d.vals = append(d.vals, p.expr())
			}
			return d
		}
	}
	p.pos--
	p.fail("unexpected %s", describe(t))
	return nil
}

// postfix parses .name, [key], [a:b:c] and (args).
func (p *parser) postfix(x expr) expr {
	for {
		t := p.cur()
		switch {
		case p.isOp("."):
			p.next()
			a := p.next()
			switch a.kind {
			case tName:
				x = &attrExpr{x: x, name: a.text, line: a.line}
			case tInt:
				x = &itemExpr{x: x, key: &constExpr{a.val}, line: a.line}
			default:
				p.fail("expected an attribute name after '.'")
			}
		case p.isOp("["):
			p.next()
			x = p.subscript(x, t.line)
		case p.isOp("("):
			x = p.call(x)
		default:
			return x
		}
	}
}

func (p *parser) subscript(x expr, line int) expr {
	var parts [3]expr
	n, colon := 0, false
	for !p.skipOp("]") {
		switch {
		case p.skipOp(":"):
			colon = true
			n++
			if n > 2 {
				p.fail("too many ':' in a slice")
			}
		case p.isOp(","):
			p.fail("tuple subscripts are not supported")
		default:
			parts[n] = p.expr()
		}
	}
	if !colon {
		if parts[0] == nil {
			p.fail("empty subscript")
		}
		return &itemExpr{x: x, key: parts[0], line: line}
	}
	return &sliceExpr{x: x, start: parts[0], stop: parts[1], stp: parts[2]}
}

// callArgs parses (a, b, k=v) after the "(".
func (p *parser) callArgs() (args []expr, kw []string, kwv []expr) {
	p.expectOp("(")
	for !p.skipOp(")") {
		if len(args)+len(kw) > 0 {
			p.expectOp(",")
			if p.skipOp(")") {
				break
			}
		}
		if p.isOp("*") || p.isOp("**") {
			p.fail("*args and **kwargs in calls are not supported")
		}
		if p.cur().kind == tName && p.toks[p.pos+1].kind == tOp && p.toks[p.pos+1].text == "=" {
			kw = append(kw, p.next().text)
			p.next()
			kwv = append(kwv, p.expr())
			continue
		}
		if len(kw) > 0 {
			p.fail("positional argument after keyword argument")
		}
		args = append(args, p.expr())
	}
	return
}

func (p *parser) call(fn expr) expr {
	line := p.cur().line
	args, kw, kwv := p.callArgs()
	return &callExpr{fn: fn, args: args, kw: kw, kwv: kwv, line: line}
}

func (p *parser) filterCall(x expr) *filterExpr {
	line := p.cur().line
	name := p.expectName()
	for p.isOp(".") { // dotted filter names
		p.next()
		name += "." + p.expectName()
	}
	f := &filterExpr{x: x, name: name, line: line}
	if p.isOp("(") {
		f.args, f.kw, f.kwv = p.callArgs()
	}
	return f
}

// filterTests parses "| filter", "is test" and calls after them.
func (p *parser) filterTests(x expr) expr {
	for {
		switch {
		case p.isOp("|"):
			p.next()
			x = p.filterCall(x)
		case p.isName("is"):
			line := p.next().line
			t := &testExpr{x: x, negate: p.skipName("not"), line: line}
			t.name = p.expectName()
			switch c := p.cur(); {
			case p.isOp("("):
				var kw []string
				t.args, kw, _ = p.callArgs()
				if len(kw) > 0 {
					p.fail("keyword arguments to tests are not supported")
				}
			case (c.kind == tName && c.text != "else" && c.text != "or" && c.text != "and" && c.text != "is") ||
				c.kind == tString || c.kind == tInt || c.kind == tFloat || p.isOp("[") || p.isOp("{"):
				t.args = []expr{p.postfix(p.primary())}
			}
			x = t
		case p.isOp("("):
			x = p.call(x)
		default:
			return x
		}
	}
}
