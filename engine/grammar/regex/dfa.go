package regex

import (
	"slices"
	"unicode/utf8"
	"unsafe"
)

// DFA runs an NFA by subset construction on demand: each DFA state is the
// set of NFA range instructions the input can be at, built the first time
// it is reached. State Dead (0) is dead; Start (1) is the start. A DFA
// grows as it is asked: not safe for concurrent use.
type DFA struct {
	n      *NFA
	states []dstate
	index  map[string]int32
}

type dstate struct {
	set   []int32 // range instructions, sorted
	match bool
	ascii [128]int32 // next state for ASCII runes; 0 unknown (dead is stored as -1)
	other map[rune]int32
	loops *SelfLoop // built on first use
}

// SelfLoop is the characters that lead from a state back to itself: ASCII
// as a bitset, the others by UTF-8 lead byte (bit b-0xC0: every character
// starting with b does).
type SelfLoop struct {
	ASCII [2]uint64
	Leads uint64
}

// maxDFAStates bounds one regex's cache; a string that needs more is
// refused (a validation error at worst, never a wrong acceptance).
const maxDFAStates = 1 << 14

// The dead state (no input leads on) and the start state.
const (
	Dead  int32 = 0
	Start int32 = 1
)

// NewDFA returns the DFA of n, its start state built.
func NewDFA(n *NFA) *DFA {
	d := &DFA{n: n, index: map[string]int32{}}
	d.states = append(d.states, dstate{}) // dead
	d.intern(d.closure([]int32{n.start}))
	return d
}

// closure follows splits from the given instructions.
func (d *DFA) closure(from []int32) []int32 {
	var set []int32
	seen := map[int32]bool{}
	stack := append([]int32(nil), from...)
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[i] {
			continue
		}
		seen[i] = true
		in := &d.n.insts[i]
		if in.op == opSplit {
			stack = append(stack, in.out, in.out1)
			continue
		}
		set = append(set, i)
	}
	slices.Sort(set)
	return set
}

func (d *DFA) intern(set []int32) int32 {
	if len(set) == 0 {
		return 0
	}
	key := unsafe.String((*byte)(unsafe.Pointer(&set[0])), len(set)*4)
	if id, ok := d.index[key]; ok {
		return id
	}
	if len(d.states) >= maxDFAStates {
		return 0
	}
	st := dstate{set: set}
	for _, i := range set {
		if d.n.insts[i].op == opMatch {
			st.match = true
		}
	}
	d.states = append(d.states, st)
	id := int32(len(d.states) - 1)
	d.index[string(key)] = id
	return id
}

// Next is the state after rune r from s (Dead: none).
func (d *DFA) Next(s int32, r rune) int32 {
	if s <= 0 {
		return 0
	}
	st := &d.states[s]
	if r < 128 {
		if v := st.ascii[r]; v != 0 {
			return max(v, 0)
		}
	} else if v, ok := st.other[r]; ok {
		return v
	}
	var to []int32
	for _, i := range st.set {
		in := &d.n.insts[i]
		if in.op == opRange && inRanges(in.ranges, r) {
			to = append(to, in.out)
		}
	}
	id := d.intern(d.closure(to))
	st = &d.states[s] // intern may have moved the slice
	if r < 128 {
		st.ascii[r] = id
		if id == 0 {
			st.ascii[r] = -1
		}
	} else {
		if st.other == nil {
			st.other = map[rune]int32{}
		}
		if len(st.other) < 4096 {
			st.other[r] = id
		}
	}
	return id
}

// Accepts reports whether s is an accepting state.
func (d *DFA) Accepts(s int32) bool { return s > 0 && d.states[s].match }

func inRanges(r []rune, c rune) bool {
	for i := 0; i < len(r); i += 2 {
		if c < r[i] {
			return false
		}
		if c <= r[i+1] {
			return true
		}
	}
	return false
}

// Match reports whether the whole of s is accepted.
func (d *DFA) Match(s string) bool {
	st := int32(1)
	for _, r := range s {
		if st = d.Next(st, r); st == 0 {
			return false
		}
	}
	return d.Accepts(st)
}

// CanTake reports whether some rune in [lo, hi] leads out of state s.
func (d *DFA) CanTake(s int32, lo, hi rune) bool {
	if s <= 0 {
		return false
	}
	for _, i := range d.states[s].set {
		in := &d.n.insts[i]
		if in.op != opRange {
			continue
		}
		for j := 0; j < len(in.ranges); j += 2 {
			if in.ranges[j] <= hi && in.ranges[j+1] >= lo {
				return true
			}
		}
	}
	return false
}

// Uniform reports whether every character in [lo, hi] (surrogates left
// out: no valid UTF-8 holds one) leads from s to the same state, and which
// (0: none is taken).
func (d *DFA) Uniform(s int32, lo, hi rune) (int32, bool) {
	if s <= 0 {
		return 0, true
	}
	parts := [][2]rune{{lo, min(hi, 0xD7FF)}, {max(lo, 0xE000), hi}}
	size := rune(0)
	for _, p := range parts {
		size += max(0, p[1]-p[0]+1)
	}
	if size == 0 {
		return 0, true
	}
	taken := false
	for _, i := range d.states[s].set {
		in := &d.n.insts[i]
		if in.op != opRange {
			continue
		}
		covered := rune(0)
		for j := 0; j < len(in.ranges); j += 2 {
			for _, p := range parts {
				covered += max(0, min(in.ranges[j+1], p[1])-max(in.ranges[j], p[0])+1)
			}
		}
		switch covered {
		case 0:
		case size:
			taken = true
		default:
			return 0, false // the instruction splits the characters
		}
	}
	if !taken {
		return 0, true
	}
	first := lo
	if first >= 0xD800 && first <= 0xDFFF {
		first = 0xE000
	}
	return d.Next(s, first), true
}

// Loop is the self-loop summary of state s (built once, then kept).
func (d *DFA) Loop(s int32) *SelfLoop {
	if l := d.states[s].loops; l != nil {
		return l
	}
	l := &SelfLoop{}
	for r := rune(0); r < 128; r++ {
		if d.Next(s, r) == s {
			l.ASCII[r>>6] |= 1 << (r & 63)
		}
	}
	for b := 0xC2; b <= 0xF4; b++ {
		k := 6
		lo := rune(b&0x1F) << 6
		switch {
		case b >= 0xF0:
			k, lo = 18, max(rune(b&0x07)<<18, 0x10000)
		case b >= 0xE0:
			k, lo = 12, max(rune(b&0x0F)<<12, 0x800)
		}
		hi := min(lo|(1<<k-1), utf8.MaxRune)
		if to, same := d.Uniform(s, lo, hi); same && to == s {
			l.Leads |= 1 << (b - 0xC0)
		}
	}
	d.states[s].loops = l
	return l
}
