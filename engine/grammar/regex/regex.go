// Package regex compiles the regular expressions JSON Schema uses
// (ECMA-262 as "pattern" writes them; lookaround, backreferences and word
// boundaries are refused: they are not regular, and a grammar must never
// pretend to enforce what it cannot) to a Thompson NFA over runes, and runs
// it as a lazily built DFA that answers what a token mask asks: the state
// after a rune, whether a range of runes can be taken or all leads to one
// state, and which characters loop a state onto itself.
//
// engine/grammar uses it for string patterns, formats and string enums.
// Data flows one way: a pattern (or literals) in, an NFA, then DFA states
// out as they are reached. Sizes are bounded: a pattern's bytes, the NFA's
// instructions after counted repeats are expanded, a DFA's states.
package regex

import (
	"fmt"
	"strconv"
	"unicode/utf8"
)

const (
	maxPatternBytes = 4 << 10 // a pattern's source
	maxNFAInsts     = 20000   // after counted repetitions are expanded
)

type instOp uint8

const (
	opRange instOp = iota // consume a rune in ranges (pairs lo, hi)
	opSplit               // epsilon to out and out1
	opMatch
)

type inst struct {
	op     instOp
	ranges []rune
	out    int32
	out1   int32
}

// NFA is a compiled regex; start is the first instruction.
type NFA struct {
	insts []inst
	start int32
}

// reNode is the parsed syntax tree.
type reNode struct {
	kind     byte // 'c' class, 's' sequence, 'a' alternation, 'r' repeat, 'e' empty
	ranges   []rune
	subs     []*reNode
	min, max int // repeat bounds; max -1 unbounded
}

type reParser struct {
	src []rune
	pos int
}

var anyRune = []rune{0, utf8.MaxRune}

// Compile compiles a JSON Schema pattern with search semantics: an
// unanchored side matches anything there.
func Compile(pattern string) (*NFA, error) {
	if len(pattern) > maxPatternBytes {
		return nil, fmt.Errorf("pattern is %d bytes, over the %d-byte limit", len(pattern), maxPatternBytes)
	}
	if !utf8.ValidString(pattern) {
		return nil, fmt.Errorf("pattern is not valid UTF-8")
	}
	p := &reParser{src: []rune(pattern)}
	var alts []*reNode
	for {
		anchorStart := p.eat('^')
		seq, err := p.sequence(true)
		if err != nil {
			return nil, fmt.Errorf("pattern %q: %w", pattern, err)
		}
		anchorEnd := p.eat('$')
		if !anchorStart {
			seq = &reNode{kind: 's', subs: []*reNode{dotStar(), seq}}
		}
		if !anchorEnd {
			seq = &reNode{kind: 's', subs: []*reNode{seq, dotStar()}}
		}
		alts = append(alts, seq)
		if p.pos >= len(p.src) {
			break
		}
		if !p.eat('|') {
			return nil, fmt.Errorf("pattern %q: unexpected %q at %d (anchors are supported only at the ends)", pattern, p.src[p.pos], p.pos)
		}
	}
	root := alts[0]
	if len(alts) > 1 {
		root = &reNode{kind: 'a', subs: alts}
	}
	return buildNFA(root)
}

// CompileAnchored compiles a regex that must match the whole string.
func CompileAnchored(re string) (*NFA, error) {
	return Compile("^(?:" + re + ")$")
}

// Literals compiles the regex that matches exactly one of strs.
func Literals(strs []string) (*NFA, error) {
	alt := &reNode{kind: 'a'}
	for _, s := range strs {
		seq := &reNode{kind: 's'}
		for _, r := range s {
			seq.subs = append(seq.subs, &reNode{kind: 'c', ranges: []rune{r, r}})
		}
		alt.subs = append(alt.subs, seq)
	}
	return buildNFA(alt)
}

func dotStar() *reNode {
	return &reNode{kind: 'r', min: 0, max: -1, subs: []*reNode{{kind: 'c', ranges: anyRune}}}
}

func (p *reParser) eat(r rune) bool {
	if p.pos < len(p.src) && p.src[p.pos] == r {
		p.pos++
		return true
	}
	return false
}

func (p *reParser) alternation() (*reNode, error) {
	var alts []*reNode
	for {
		seq, err := p.sequence(false)
		if err != nil {
			return nil, err
		}
		alts = append(alts, seq)
		if !p.eat('|') {
			break
		}
	}
	if len(alts) == 1 {
		return alts[0], nil
	}
	return &reNode{kind: 'a', subs: alts}, nil
}

// sequence parses atoms up to '|' or ')' (or, at the top, a final '$').
func (p *reParser) sequence(top bool) (*reNode, error) {
	seq := &reNode{kind: 's'}
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		if c == '|' || c == ')' {
			if c == ')' && top {
				return nil, fmt.Errorf("unbalanced ')' at %d", p.pos)
			}
			break
		}
		if c == '$' {
			if top && (p.pos+1 == len(p.src) || p.src[p.pos+1] == '|') {
				break
			}
			return nil, fmt.Errorf("'$' inside the pattern at %d is not supported", p.pos)
		}
		if c == '^' {
			return nil, fmt.Errorf("'^' inside the pattern at %d is not supported", p.pos)
		}
		atom, err := p.atom()
		if err != nil {
			return nil, err
		}
		atom, err = p.quantifier(atom)
		if err != nil {
			return nil, err
		}
		seq.subs = append(seq.subs, atom)
	}
	return seq, nil
}

func (p *reParser) atom() (*reNode, error) {
	c := p.src[p.pos]
	p.pos++
	switch c {
	case '(':
		if p.eat('?') {
			switch {
			case p.eat(':'):
			case p.pos < len(p.src) && p.src[p.pos] == '<' && p.pos+1 < len(p.src) && p.src[p.pos+1] != '=' && p.src[p.pos+1] != '!':
				for p.pos < len(p.src) && p.src[p.pos] != '>' {
					p.pos++
				}
				if !p.eat('>') {
					return nil, fmt.Errorf("unterminated group name")
				}
			default:
				return nil, fmt.Errorf("lookaround and inline flags (?…) are not supported")
			}
		}
		n, err := p.alternation()
		if err != nil {
			return nil, err
		}
		if !p.eat(')') {
			return nil, fmt.Errorf("missing ')'")
		}
		return n, nil
	case '[':
		return p.class()
	case '.':
		return &reNode{kind: 'c', ranges: negate([]rune{'\n', '\n', '\r', '\r', 0x2028, 0x2029})}, nil
	case '\\':
		r, err := p.escape(false)
		if err != nil {
			return nil, err
		}
		return &reNode{kind: 'c', ranges: r}, nil
	case '*', '+', '?':
		return nil, fmt.Errorf("nothing to repeat at %d", p.pos-1)
	case '{':
		// ECMA's Annex B reads a '{' that starts no quantifier as itself.
		return &reNode{kind: 'c', ranges: []rune{c, c}}, nil
	}
	return &reNode{kind: 'c', ranges: []rune{c, c}}, nil
}

func (p *reParser) quantifier(atom *reNode) (*reNode, error) {
	if p.pos >= len(p.src) {
		return atom, nil
	}
	min, max := -1, -1
	switch p.src[p.pos] {
	case '*':
		min, max = 0, -1
		p.pos++
	case '+':
		min, max = 1, -1
		p.pos++
	case '?':
		min, max = 0, 1
		p.pos++
	case '{':
		save := p.pos
		p.pos++
		lo, ok := p.number()
		if !ok {
			p.pos = save
			return atom, nil
		}
		hi := lo
		if p.eat(',') {
			if n, ok := p.number(); ok {
				hi = n
			} else {
				hi = -1
			}
		}
		if !p.eat('}') {
			p.pos = save
			return atom, nil
		}
		if hi >= 0 && hi < lo {
			return nil, fmt.Errorf("bad repeat {%d,%d}", lo, hi)
		}
		if lo > 1000 || hi > 1000 {
			return nil, fmt.Errorf("repeat count over 1000")
		}
		min, max = lo, hi
	default:
		return atom, nil
	}
	p.eat('?') // lazy and greedy match the same strings
	if p.pos < len(p.src) && (p.src[p.pos] == '*' || p.src[p.pos] == '+' || p.src[p.pos] == '?') {
		return nil, fmt.Errorf("nested quantifier at %d", p.pos)
	}
	return &reNode{kind: 'r', min: min, max: max, subs: []*reNode{atom}}, nil
}

func (p *reParser) number() (int, bool) {
	start := p.pos
	for p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
		p.pos++
	}
	if p.pos == start || p.pos-start > 6 {
		return 0, false
	}
	n, _ := strconv.Atoi(string(p.src[start:p.pos]))
	return n, true
}

func (p *reParser) class() (*reNode, error) {
	neg := p.eat('^')
	var ranges []rune
	first := true
	for {
		if p.pos >= len(p.src) {
			return nil, fmt.Errorf("unterminated character class")
		}
		c := p.src[p.pos]
		if c == ']' && !first {
			p.pos++
			break
		}
		first = false
		p.pos++
		var lo []rune
		if c == '\\' {
			r, err := p.escape(true)
			if err != nil {
				return nil, err
			}
			lo = r
		} else {
			lo = []rune{c, c}
		}
		// a range a-b (only between single characters)
		if len(lo) == 2 && lo[0] == lo[1] && p.pos+1 < len(p.src) && p.src[p.pos] == '-' && p.src[p.pos+1] != ']' {
			p.pos++
			h := p.src[p.pos]
			p.pos++
			hi := []rune{h, h}
			if h == '\\' {
				r, err := p.escape(true)
				if err != nil {
					return nil, err
				}
				hi = r
			}
			if len(hi) != 2 || hi[0] != hi[1] || hi[0] < lo[0] {
				return nil, fmt.Errorf("bad class range")
			}
			lo = []rune{lo[0], hi[0]}
		}
		ranges = append(ranges, lo...)
	}
	ranges = normalize(ranges)
	if neg {
		ranges = negate(ranges)
	}
	if len(ranges) == 0 {
		return nil, fmt.Errorf("empty character class")
	}
	return &reNode{kind: 'c', ranges: ranges}, nil
}

// escape reads after a backslash and returns the ranges it denotes.
func (p *reParser) escape(inClass bool) ([]rune, error) {
	if p.pos >= len(p.src) {
		return nil, fmt.Errorf("trailing backslash")
	}
	c := p.src[p.pos]
	p.pos++
	digit := []rune{'0', '9'}
	word := []rune{'0', '9', 'A', 'Z', '_', '_', 'a', 'z'}
	space := normalize([]rune{'\t', '\r', ' ', ' ', 0xa0, 0xa0, 0x1680, 0x1680, 0x2000, 0x200a,
		0x2028, 0x2029, 0x202f, 0x202f, 0x205f, 0x205f, 0x3000, 0x3000, 0xfeff, 0xfeff})
	switch c {
	case 'd':
		return digit, nil
	case 'D':
		return negate(digit), nil
	case 'w':
		return word, nil
	case 'W':
		return negate(word), nil
	case 's':
		return space, nil
	case 'S':
		return negate(space), nil
	case 'n':
		return []rune{'\n', '\n'}, nil
	case 't':
		return []rune{'\t', '\t'}, nil
	case 'r':
		return []rune{'\r', '\r'}, nil
	case 'f':
		return []rune{'\f', '\f'}, nil
	case 'v':
		return []rune{'\v', '\v'}, nil
	case '0':
		return []rune{0, 0}, nil
	case 'b':
		if inClass {
			return []rune{'\b', '\b'}, nil
		}
		return nil, fmt.Errorf(`word boundary \b is not supported`)
	case 'B':
		return nil, fmt.Errorf(`\B is not supported`)
	case 'x', 'u':
		n := 2
		if c == 'u' {
			n = 4
		}
		if c == 'u' && p.pos < len(p.src) && p.src[p.pos] == '{' {
			end := p.pos + 1
			for end < len(p.src) && p.src[end] != '}' {
				end++
			}
			v, err := strconv.ParseUint(string(p.src[p.pos+1:min(end, len(p.src))]), 16, 32)
			if err != nil || end >= len(p.src) || v > utf8.MaxRune {
				return nil, fmt.Errorf(`bad \u{…} escape`)
			}
			p.pos = end + 1
			return []rune{rune(v), rune(v)}, nil
		}
		if p.pos+n > len(p.src) {
			return nil, fmt.Errorf(`short \%c escape`, c)
		}
		v, err := strconv.ParseUint(string(p.src[p.pos:p.pos+n]), 16, 32)
		if err != nil {
			return nil, fmt.Errorf(`bad \%c escape`, c)
		}
		p.pos += n
		return []rune{rune(v), rune(v)}, nil
	case 'p', 'P', 'k', 'c':
		return nil, fmt.Errorf(`\%c escapes are not supported`, c)
	}
	if c >= '1' && c <= '9' {
		return nil, fmt.Errorf("backreferences are not supported")
	}
	if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
		return nil, fmt.Errorf(`unknown escape \%c`, c)
	}
	return []rune{c, c}, nil
}
