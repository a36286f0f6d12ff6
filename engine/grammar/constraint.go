package grammar

import (
	"fmt"
	"perch/engine/grammar/regex"
	"unicode/utf8"
)

// maxStates bounds the readings kept open at one point; past it the rest
// are dropped, which can only refuse more, never accept what is invalid.
const maxStates = 256

// Constraint is one generation's progress through a grammar.
type Constraint struct {
	g      *Grammar
	v      *Vocab
	stops  []int32 // allowed once the grammar may end
	m      matcher
	states []*stack
	bufs   [][]*stack
	mask   []uint64
	strs   []*stack // Mask's readings inside strings
	others []*stack
	// rest holds, per string reading (restKey), the tokens of the slicer's
	// rest trie it takes: while a string runs on, that set stays the same.
	rest    map[restKey][]int32
	scratch []uint64
}

// restKey is what a string reading with no regex takes from the rest trie
// depends on: the stack below it (immutable, so its pointer), its node,
// and its progress where the node counts characters or it is a key.
type restKey struct {
	up  *stack
	n   *node
	key bool
	i   int32
	cnt int32
	aux int32
}

const maxRestCache = 64

// NewConstraint starts a generation; stops are the ids that may end it
// once the value is complete (EOS, end of turn; for tool calls the
// <|tool_response> token).
func NewConstraint(g *Grammar, v *Vocab, stops []int32) *Constraint {
	c := &Constraint{g: g, v: v, stops: stops, mask: make([]uint64, (v.size+63)/64)}
	c.m.g = g
	c.Reset()
	return c
}

// Reset goes back to the start.
func (c *Constraint) Reset() {
	c.rest = nil
	if c.g.calls != nil {
		phase := pOpen
		if c.g.calls.text {
			phase = pText
		}
		c.states = []*stack{{f: frame{k: fCalls, phase: phase}}}
		return
	}
	c.states = []*stack{{f: frame{k: fValue, n: c.g.root}}}
}

// Finished reports whether the value is complete and nothing may follow.
func (c *Constraint) Finished() bool {
	for _, s := range c.states {
		if s != nil {
			return false
		}
	}
	return true
}

// CanEnd reports whether a stop token is allowed now.
func (c *Constraint) CanEnd() bool {
	for _, s := range c.states {
		if c.m.canEnd(s) {
			return true
		}
	}
	return false
}

// Mask computes the allowed tokens as a bitset over the vocabulary (bit i
// of word i/64); it is valid until the next call.
func (c *Constraint) Mask() []uint64 {
	// Each reading contributes its own tokens: a string between characters
	// through the slicer (its plain tokens by table, the rest walked), any
	// other reading by walking the whole trie.
	clear(c.mask)
	c.m.scratch = true
	sl := &c.v.json
	if c.g.tool {
		sl = &c.v.tool
	}
	strs, others := c.strs[:0], c.others[:0]
	for _, s := range c.states {
		room, ok := plainString(s)
		if !ok {
			others = append(others, s)
			continue
		}
		strs = append(strs, s)
		plain := sl.upTo[min(room, len(sl.upTo)-1)]
		if f := &s.f; f.re != nil {
			for i, w := range c.g.plainFor(sl, f.re, f.st, c.v.size) {
				c.mask[i] |= w & plain[i]
			}
		} else {
			for i, w := range plain {
				c.mask[i] |= w
			}
		}
	}
	if len(strs) == 1 && strs[0].f.re == nil {
		c.restTokens(sl, strs[0])
	} else if len(strs) > 0 {
		c.walk(&sl.rest, 0, strs, 0)
	}
	if len(others) > 0 {
		c.walk(&c.v.all, 0, others, 0)
	}
	c.strs, c.others = strs, others
	c.m.scratch = false
	c.m.resetArena()
	if c.CanEnd() {
		for _, id := range c.stops {
			if int(id) < c.v.size && id >= 0 {
				c.mask[id>>6] |= 1 << (id & 63)
			}
		}
	}
	return c.mask
}

// restTokens adds the rest-trie tokens string reading s takes, walked
// once per restKey.
func (c *Constraint) restTokens(sl *slicer, s *stack) {
	f := &s.f
	key := restKey{up: s.up, n: f.n, key: f.key, i: f.i, aux: f.aux}
	if !f.key && (f.n.minLen > 0 || f.n.maxLen >= 0) {
		key.cnt = f.cnt
	}
	ids, ok := c.rest[key]
	if !ok {
		saved := c.mask
		if c.scratch == nil {
			c.scratch = make([]uint64, len(c.mask))
		}
		clear(c.scratch)
		c.mask = c.scratch
		c.walk(&sl.rest, 0, []*stack{s}, 0)
		c.mask = saved
		for _, id := range sl.rest.toks {
			if c.scratch[id>>6]&(1<<(id&63)) != 0 {
				ids = append(ids, id)
			}
		}
		if c.rest == nil || len(c.rest) >= maxRestCache {
			c.rest = map[restKey][]int32{}
		}
		c.rest[key] = ids
	}
	for _, id := range ids {
		c.mask[id>>6] |= 1 << (id & 63)
	}
}

// Allowed reports whether id is in the last Mask.
func (c *Constraint) Allowed(id int32) bool {
	return id >= 0 && int(id) < c.v.size && c.mask[id>>6]&(1<<(id&63)) != 0
}

// plainString reports whether s is inside a string between characters,
// and how many characters that string still has room for.
func plainString(s *stack) (int, bool) {
	if s == nil {
		return 0, false
	}
	f := &s.f
	if f.k != fStr || (f.aux != sPlain && f.aux != sAfterLT) {
		return 0, false
	}
	room := 1 << 30
	if !f.key && f.n.maxLen >= 0 {
		room = f.n.maxLen - int(f.cnt)
	}
	return room, true
}

func (c *Constraint) walk(v *trie, node int32, states []*stack, depth int) {
	if depth > 0 {
		for _, id := range v.toks[v.tokAt[node]:v.tokAt[node+1]] {
			c.mask[id>>6] |= 1 << (id & 63)
		}
	}
	if depth == len(c.bufs) {
		c.bufs = append(c.bufs, make([]*stack, 0, 16))
	}
	for e := v.first[node]; e < v.first[node+1]; e++ {
		b := v.label[e]
		next := c.bufs[depth][:0]
		for _, s := range states {
			next = c.m.step(s, b, next)
			if len(next) >= maxStates {
				break
			}
		}
		c.bufs[depth] = next
		if len(next) > 0 {
			c.walk(v, v.to[e], next, depth+1)
		}
	}
}

// Advance moves past token id (its bytes); a stop token is accepted only
// where the grammar may end.
func (c *Constraint) Advance(id int32) error {
	for _, s := range c.stops {
		if s == id {
			if !c.CanEnd() {
				return fmt.Errorf("grammar: stop token %d before the value is complete", id)
			}
			c.states = []*stack{nil}
			return nil
		}
	}
	b, ok := c.tokenBytes(id)
	if !ok {
		return fmt.Errorf("grammar: token %d is never allowed", id)
	}
	for _, x := range b {
		var next []*stack
		for _, s := range c.states {
			next = c.m.step(s, x, next)
			if len(next) >= maxStates {
				break
			}
		}
		if len(next) == 0 {
			return fmt.Errorf("grammar: token %d (%q) is not allowed here", id, b)
		}
		c.states = next
	}
	return nil
}

func (c *Constraint) tokenBytes(id int32) ([]byte, bool) {
	if id < 0 || int(id) >= len(c.v.bytes) || c.v.bytes[id] == nil {
		return nil, false
	}
	return c.v.bytes[id], true
}

// maxPlainCache bounds the regex states whose plain-token sets a grammar keeps.
const maxPlainCache = 256

type dfaState struct {
	re *regex.DFA
	st int32
}

// plainFor is the set of plain tokens whose characters the regex takes
// from state st without dying, computed once per state by walking the
// plain tokens' trie with the DFA alone.
func (g *Grammar) plainFor(sl *slicer, re *regex.DFA, st int32, size int) []uint64 {
	key := dfaState{re, st}
	if set, ok := g.plainCache[key]; ok {
		return set
	}
	set := make([]uint64, (size+63)/64)
	walkPlain(&sl.plain, &sl.below, 0, re, st, 0, 0, -1, set)
	if g.plainCache == nil {
		g.plainCache = map[dfaState][]uint64{}
	}
	if len(g.plainCache) < maxPlainCache {
		g.plainCache[key] = set
	}
	return set
}

// walkPlain follows the trie from node with the DFA at st; cp and need are
// a character's bits so far and its continuation bytes still to come, to
// the state the character leads to when every character it may still
// become leads there (-1: not known yet). A lead byte whose characters the
// regex cannot take prunes its whole subtree.
//
// Where every byte below node loops the DFA back to st, the subtree's
// tokens are all taken without walking it.
func walkPlain(t *trie, sum *subtrees, node int32, re *regex.DFA, st int32, cp rune, need int, to int32, set []uint64) {
	if need == 0 {
		end := t.tokAt[node+1]
		if l, below := re.Loop(st), &sum.ascii[node]; below[0]&^l.ASCII[0] == 0 && below[1]&^l.ASCII[1] == 0 &&
			sum.leads[node]&^l.Leads == 0 {
			end = sum.toksEnd[node]
		}
		for _, id := range t.toks[t.tokAt[node]:end] {
			set[id>>6] |= 1 << (id & 63)
		}
		if end != t.tokAt[node+1] {
			return
		}
	}
	for e := t.first[node]; e < t.first[node+1]; e++ {
		b := t.label[e]
		nst, ncp, nneed, nto := st, cp, need, to
		switch {
		case need > 0:
			ncp, nneed = cp<<6|rune(b&0x3F), need-1
		case b < 0x80:
			ncp, nneed = rune(b), 0
		case b >= 0xF0:
			ncp, nneed = rune(b&0x07), 3
		case b >= 0xE0:
			ncp, nneed = rune(b&0x0F), 2
		default:
			ncp, nneed = rune(b&0x1F), 1
		}
		switch {
		case nneed == 0 && nto >= 0:
			nst, nto = nto, -1
		case nneed == 0:
			if nst = re.Next(st, ncp); nst == regex.Dead {
				continue
			}
		case nto < 0:
			k := uint(nneed) * 6
			lo, hi := ncp<<k, min(ncp<<k|(1<<k-1), utf8.MaxRune)
			if need == 0 {
				lo = max(lo, [4]rune{0, 0x80, 0x800, 0x10000}[nneed])
			}
			var same bool
			if nto, same = re.Uniform(st, lo, hi); same && nto == regex.Dead {
				continue
			} else if !same {
				nto = -1
			}
		}
		walkPlain(t, sum, t.to[e], re, nst, ncp, nneed, nto, set)
	}
}
