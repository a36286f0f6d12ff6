package grammar

import (
	"perch/engine/grammar/regex"
	"slices"
	"testing"
	"unicode/utf8"
)

// TestPlainForExact: the pruned walk (lead bytes, uniform ranges, subtrees
// taken whole where the regex loops) gives, for every DFA state a few
// steps from the start, exactly the plain tokens whose characters the
// regex takes one by one.
func TestPlainForExact(t *testing.T) {
	_, v := gemmaVocab(t)
	sl := &v.json
	var plain []int32
	for w, bits := range sl.upTo[len(sl.upTo)-1] {
		for ; bits != 0; bits &= bits - 1 {
			plain = append(plain, int32(w*64+trailingZeros(bits)))
		}
	}
	for _, pat := range []string{`^[a-z0-9-]+$`, `^[^<>]*$`, `.*`, `^\d{4}-\d{2}$`, `^[A-Za-z_]{1,3}é?$`, `^([À-ÿ]|\s)+$`, `^[^\u2028a]*b?$`} {
		n, err := regex.Compile(pat)
		if err != nil {
			t.Fatal(err)
		}
		d := regex.NewDFA(n)
		g := &Grammar{}
		states := []int32{regex.Start}
		for _, r := range "a1-éb<" {
			if s := d.Next(states[len(states)-1], r); s > 0 {
				states = append(states, s)
			}
		}
		for _, st := range slices.Compact(states) {
			got := g.plainFor(sl, d, st, v.size)
			want := make([]uint64, len(got))
			for _, id := range plain {
				s := st
				for _, r := range string(v.bytes[id]) {
					if s = d.Next(s, r); s == 0 {
						break
					}
				}
				if s != 0 && utf8.Valid(v.bytes[id]) {
					want[id>>6] |= 1 << (id & 63)
				}
			}
			if !slices.Equal(got, want) {
				for i := range got {
					if diff := got[i] ^ want[i]; diff != 0 {
						id := int32(i*64 + trailingZeros(diff))
						t.Fatalf("%s state %d: token %q differs (pruned walk says %v)", pat, st, v.bytes[id], got[i]&(diff&-diff) != 0)
					}
				}
			}
		}
	}
}
