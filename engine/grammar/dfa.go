package grammar

import (
	"slices"
	"unsafe"
)

// dfa runs an nfa by subset construction on demand: each DFA state is the
// set of NFA range instructions the input can be at, built the first time
// it is reached. State 0 is dead; 1 is the start.
type dfa struct {
	n      *nfa
	states []dstate
	index  map[string]int32
}

type dstate struct {
	set   []int32 // range instructions, sorted
	match bool
	ascii [128]int32 // next state for ASCII runes; 0 unknown (dead is stored as -1)
	other map[rune]int32
}

// maxDFAStates bounds one regex's cache; a string that needs more is
// refused (a validation error at worst, never a wrong acceptance).
const maxDFAStates = 1 << 14

func newDFA(n *nfa) *dfa {
	d := &dfa{n: n, index: map[string]int32{}}
	d.states = append(d.states, dstate{}) // dead
	d.intern(d.closure([]int32{n.start}))
	return d
}

// closure follows splits from the given instructions.
func (d *dfa) closure(from []int32) []int32 {
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

func (d *dfa) intern(set []int32) int32 {
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

// next is the state after rune r from s (0: dead).
func (d *dfa) next(s int32, r rune) int32 {
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

func (d *dfa) accepts(s int32) bool { return s > 0 && d.states[s].match }

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

// matchString reports whether the whole of s is accepted.
func (d *dfa) matchString(s string) bool {
	st := int32(1)
	for _, r := range s {
		if st = d.next(st, r); st == 0 {
			return false
		}
	}
	return d.accepts(st)
}

// canTake reports whether some rune in [lo, hi] leads out of state s.
func (d *dfa) canTake(s int32, lo, hi rune) bool {
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
