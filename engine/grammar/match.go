package grammar

import "perch/engine/grammar/regex"

// The matcher runs a compiled grammar byte by byte. Its state is a set of
// stacks (an anyOf, or an optional property, can leave several readings
// open); a stack is an immutable linked list of frames, so stepping shares
// the untouched part and a mask can try every token from the same state.
// A nil stack is a finished value; a stack that cannot take a byte is
// dropped.

type fkind uint8

const (
	fValue fkind = iota // a value of n starts here
	fBytes              // the rest of a fixed byte string
	fLit                // an enum literal, through n.lits
	fStr                // inside a string
	fNum                // inside a number
	fObj                // inside an object
	fArr                // inside an array
	fCalls              // Gemma-4 tool calls (toolcall.go)
	fKey                // a declared property's key, through n.any.keys (object.go)
)

// Object and array phases.
const (
	pOpen  uint8 = iota // after '{' / '['
	pValue              // after a member
	pComma              // after ','
)

type frame struct {
	k     fkind
	phase uint8
	key   bool // fStr: an object key (checked against n.names)
	n     *node
	bs    []byte     // fBytes
	re    *regex.DFA // fStr
	i     int32      // fObj: next property; fBytes: position; fLit, fKey: trie node; fStr: names node
	cnt   int32      // members, items, code points, digits
	st    int32      // fStr: DFA state (0: none); fNum: phase
	aux   int32      // fStr: escape/UTF-8 progress
	cp    rune       // fStr: code point being read; fNum: fraction digits
	mant  uint64     // fNum: the digits so far; fObj (any order): the properties seen
}

type stack struct {
	f  frame
	up *stack
}

// matcher holds the allocation arena used while computing a mask.
type matcher struct {
	g       *Grammar
	arena   [][]stack
	chunk   int
	used    int
	scratch bool
}

const arenaChunk = 1 << 14

func (m *matcher) push(f frame, up *stack) *stack {
	if !m.scratch {
		return &stack{f: f, up: up}
	}
	if m.chunk == len(m.arena) {
		m.arena = append(m.arena, make([]stack, arenaChunk))
	}
	s := &m.arena[m.chunk][m.used]
	s.f, s.up = f, up
	if m.used++; m.used == arenaChunk {
		m.chunk, m.used = m.chunk+1, 0
	}
	return s
}

func (m *matcher) resetArena() { m.chunk, m.used = 0, 0 }

// step feeds byte c to s and appends the stacks that can take it.
func (m *matcher) step(s *stack, c byte, out []*stack) []*stack {
	if s == nil {
		return out
	}
	f := s.f
	switch f.k {
	case fValue:
		return m.startValue(f.n, s.up, c, out)
	case fBytes:
		if f.bs[f.i] != c {
			return out
		}
		if int(f.i)+1 == len(f.bs) {
			return append(out, s.up)
		}
		f.i++
		return append(out, m.push(f, s.up))
	case fLit:
		t := f.n.lits
		if t.end[f.i] {
			out = m.step(s.up, c, out)
		}
		nx := t.step(f.i, c)
		if nx < 0 {
			return out
		}
		if t.end[nx] && len(t.next[nx]) == 0 && (c < '0' || c > '9') {
			return append(out, s.up) // a number literal waits for the byte after it
		}
		f.i = nx
		return append(out, m.push(f, s.up))
	case fStr:
		return m.stepString(s, f, c, out)
	case fNum:
		return m.stepNumber(s.up, f, c, out)
	case fObj:
		if f.n.any != nil {
			return m.stepObjectAny(s, f, c, out)
		}
		return m.stepObject(s, f, c, out)
	case fKey:
		return m.stepKey(s, f, c, out)
	case fArr:
		return m.stepArray(s, f, c, out)
	case fCalls:
		return m.stepCalls(s, f, c, out)
	}
	return out
}

// canEnd reports whether input may stop with s.
func (m *matcher) canEnd(s *stack) bool {
	if s == nil {
		return true
	}
	if s.up != nil && s.f.k != fCalls {
		return false
	}
	switch s.f.k {
	case fNum:
		return numberDone(s.f)
	case fLit:
		return s.f.n.lits.end[s.f.i]
	case fCalls:
		return (s.f.phase == pValue || s.f.phase == pText) && s.up == nil
	}
	return false
}

func (m *matcher) startValue(n *node, up *stack, c byte, out []*stack) []*stack {
	if !n.productive {
		return out
	}
	if n.anyOf != nil {
		for _, alt := range n.anyOf {
			out = m.startValue(alt, up, c, out)
		}
		return out
	}
	g := m.g
	if n.enum {
		if n.enumRe != nil && c == g.quote[0] {
			out = m.openString(n, n.enumRe, false, up, out)
		}
		if n.lits != nil {
			if nx := n.lits.step(0, c); nx >= 0 {
				out = m.step(m.push(frame{k: fLit, n: n}, up), c, out)
			}
		}
		return out
	}
	t := n.types
	switch {
	case c == '{' && t&tObj != 0:
		return append(out, m.push(frame{k: fObj, n: n, phase: pOpen}, up))
	case c == '[' && t&tArr != 0:
		return append(out, m.push(frame{k: fArr, n: n, phase: pOpen}, up))
	case c == g.quote[0] && t&tStr != 0:
		return m.openString(n, n.re, false, up, out)
	case (c == '-' || c >= '0' && c <= '9') && t&(tInt|tFrac) != 0:
		return m.stepNumber(up, frame{k: fNum, n: n}, c, out)
	case c == 't' && t&tBool != 0:
		return append(out, m.push(frame{k: fBytes, bs: []byte("true"), i: 1}, up))
	case c == 'f' && t&tBool != 0:
		return append(out, m.push(frame{k: fBytes, bs: []byte("false"), i: 1}, up))
	case c == g.null[0] && t&tNull != 0:
		return append(out, m.push(frame{k: fBytes, bs: g.null, i: 1}, up))
	}
	return out
}

// openString starts a string whose opening quote's first byte was read.
func (m *matcher) openString(n *node, re *regex.DFA, key bool, up *stack, out []*stack) []*stack {
	f := frame{k: fStr, n: n, re: re, key: key}
	if re != nil {
		f.st = 1
	}
	s := m.push(f, up)
	if len(m.g.quote) > 1 {
		s = m.push(frame{k: fBytes, bs: m.g.quote, i: 1}, s)
	}
	return append(out, s)
}

func (m *matcher) stepObject(s *stack, f frame, c byte, out []*stack) []*stack {
	n := f.n
	switch {
	case c == '}' && f.phase != pComma:
		if m.closable(f) {
			out = append(out, s.up)
		}
		return out
	case c == ',' && f.phase == pValue:
		if (n.maxProps < 0 || int(f.cnt) < n.maxProps) && m.moreKeys(f) {
			f.phase = pComma
			out = append(out, m.push(f, s.up))
		}
		return out
	case f.phase == pValue:
		return out
	}
	// a key: the next property in order, or one after optional ones
	if n.maxProps >= 0 && int(f.cnt) >= n.maxProps {
		return out
	}
	props := n.props
	for j := int(f.i); j < len(props); j++ {
		p := &props[j]
		key := p.key
		if m.g.tool {
			key = p.bareKey
		}
		if p.n.productive && len(key) > 0 && key[0] == c {
			nf := f
			nf.i, nf.cnt, nf.phase = int32(j+1), f.cnt+1, pValue
			v := m.push(frame{k: fValue, n: p.n}, m.push(nf, s.up))
			out = append(out, m.push(frame{k: fBytes, bs: key, i: 1}, v))
		}
		if p.required {
			return out
		}
	}
	if n.addl != nil && n.addl.productive && !m.g.tool && c == '"' {
		nf := f
		nf.i, nf.cnt, nf.phase = int32(len(props)), f.cnt+1, pValue
		v := m.push(frame{k: fValue, n: n.addl}, m.push(nf, s.up))
		v = m.push(frame{k: fBytes, bs: colon, i: 0}, v)
		out = m.openString(n, nil, true, v, out)
	}
	return out
}

var colon = []byte(":")

// moreKeys reports whether another property may follow.
func (m *matcher) moreKeys(f frame) bool {
	n := f.n
	for j := int(f.i); j < len(n.props); j++ {
		if n.props[j].n.productive && (!m.g.tool || n.props[j].bareKey != nil) {
			return true
		}
		if n.props[j].required {
			return false
		}
	}
	return n.addl != nil && n.addl.productive && !m.g.tool
}

// closable: no required property is left and there are enough members.
func (m *matcher) closable(f frame) bool {
	n := f.n
	for j := int(f.i); j < len(n.props); j++ {
		if n.props[j].required {
			return false
		}
	}
	return int(f.cnt) >= n.minProps
}

func (m *matcher) stepArray(s *stack, f frame, c byte, out []*stack) []*stack {
	n := f.n
	switch {
	case c == ']' && f.phase != pComma:
		if int(f.cnt) >= n.minItems {
			out = append(out, s.up)
		}
		return out
	case c == ',' && f.phase == pValue:
		if (n.maxItems < 0 || int(f.cnt) < n.maxItems) && itemAt(n, int(f.cnt)).productive {
			f.phase = pComma
			out = append(out, m.push(f, s.up))
		}
		return out
	case f.phase == pValue:
		return out
	}
	if n.maxItems >= 0 && int(f.cnt) >= n.maxItems {
		return out
	}
	item := itemAt(n, int(f.cnt))
	nf := f
	nf.cnt, nf.phase = f.cnt+1, pValue
	return m.startValue(item, m.push(nf, s.up), c, out)
}
