package regex

import (
	"fmt"
	"unicode/utf8"
)

// normalize sorts and merges range pairs.
func normalize(r []rune) []rune {
	n := len(r) / 2
	for i := 1; i < n; i++ { // insertion sort: classes are short
		for j := i; j > 0 && r[2*j] < r[2*j-2]; j-- {
			r[2*j], r[2*j-2] = r[2*j-2], r[2*j]
			r[2*j+1], r[2*j-1] = r[2*j-1], r[2*j+1]
		}
	}
	var out []rune
	for i := 0; i < n; i++ {
		lo, hi := r[2*i], r[2*i+1]
		if k := len(out); k > 0 && lo <= out[k-1]+1 {
			out[k-1] = max(out[k-1], hi)
			continue
		}
		out = append(out, lo, hi)
	}
	return out
}

// negate complements normalized ranges over all runes.
func negate(r []rune) []rune {
	r = normalize(append([]rune(nil), r...))
	var out []rune
	next := rune(0)
	for i := 0; i < len(r); i += 2 {
		if r[i] > next {
			out = append(out, next, r[i]-1)
		}
		next = r[i+1] + 1
	}
	if next <= utf8.MaxRune {
		out = append(out, next, utf8.MaxRune)
	}
	return out
}

// buildNFA lowers the tree to instructions, expanding counted repeats.
func buildNFA(root *reNode) (*NFA, error) {
	b := &nfaBuilder{}
	match := b.add(inst{op: opMatch})
	start, err := b.emit(root, match)
	if err != nil {
		return nil, err
	}
	return &NFA{insts: b.insts, start: start}, nil
}

type nfaBuilder struct{ insts []inst }

func (b *nfaBuilder) add(in inst) int32 {
	b.insts = append(b.insts, in)
	return int32(len(b.insts) - 1)
}

// emit builds n so that it continues to next; it returns n's entry.
func (b *nfaBuilder) emit(n *reNode, next int32) (int32, error) {
	if len(b.insts) > maxNFAInsts {
		return 0, fmt.Errorf("pattern too large (over %d states)", maxNFAInsts)
	}
	switch n.kind {
	case 'c':
		return b.add(inst{op: opRange, ranges: n.ranges, out: next}), nil
	case 's':
		var err error
		for i := len(n.subs) - 1; i >= 0; i-- {
			if next, err = b.emit(n.subs[i], next); err != nil {
				return 0, err
			}
		}
		return next, nil
	case 'a':
		entry := int32(-1)
		for i := len(n.subs) - 1; i >= 0; i-- {
			e, err := b.emit(n.subs[i], next)
			if err != nil {
				return 0, err
			}
			if entry < 0 {
				entry = e
			} else {
				entry = b.add(inst{op: opSplit, out: e, out1: entry})
			}
		}
		return entry, nil
	case 'r':
		sub := n.subs[0]
		if n.max < 0 { // the unbounded tail: a loop
			loop := b.add(inst{op: opSplit, out1: next})
			body, err := b.emit(sub, loop)
			if err != nil {
				return 0, err
			}
			b.insts[loop].out = body
			next = loop
		} else {
			for i := n.max; i > n.min; i-- { // optional copies
				body, err := b.emit(sub, next)
				if err != nil {
					return 0, err
				}
				next = b.add(inst{op: opSplit, out: body, out1: next})
			}
		}
		for i := 0; i < n.min; i++ {
			var err error
			if next, err = b.emit(sub, next); err != nil {
				return 0, err
			}
		}
		return next, nil
	}
	return next, nil
}
