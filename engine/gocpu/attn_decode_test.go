package gocpu

import (
	"math"
	"math/rand"
	"testing"
)

// TestSDPADecodeSplit: one query position's attention split among the
// workers (sdpaDecode: scores by keys, P·V by value tiles) gives block's
// bits, on every kernel set: GQA with one and two KV heads, contexts that
// are and are not multiples of the 6-key step, a value width that is not a
// multiple of the tile, a batch of two, causal, boolean and additive masks,
// a query of NaN and a row with every key masked.
func TestSDPADecodeSplit(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		r := rand.New(rand.NewSource(11))
		one, four := New(Options{Threads: 1}), New(Options{Threads: 4})
		defer one.Close()
		defer four.Close()
		type shape struct{ B, Hq, Hk, S, D, Dv int }
		for _, s := range []shape{{1, 8, 1, 300, 256, 256}, {1, 8, 1, 49, 64, 40}, {1, 4, 2, 100, 32, 32}, {2, 8, 1, 64, 16, 16}} {
			for _, mask := range []string{"none", "causal", "bool", "float"} {
				a := attnArgs{q: randFloats(r, s.B*s.Hq*s.D, 1), k: randFloats(r, s.B*s.Hk*s.S*s.D, 1), v: randFloats(r, s.B*s.Hk*s.S*s.Dv, 1),
					B: s.B, Hq: s.Hq, Hk: s.Hk, L: 1, S: s.S, D: s.D, Dv: s.Dv, scale: float32(1 / math.Sqrt(float64(s.D)))}
				a.q[s.D+1] = float32(math.NaN()) // query head 1: NaN scores
				full := []int{s.B, s.Hq, 1, s.S}
				switch mask {
				case "causal":
					a.causal = true
				case "bool":
					a.mb = make([]bool, s.Hq*s.S)
					for i := range a.mb {
						a.mb[i] = r.Intn(4) != 0 && i/s.S != 2 // head 2: every key masked
					}
					a.ms = bstrides([]int{1, s.Hq, 1, s.S}, full)
				case "float":
					a.mf = randFloats(r, s.B*s.S, 3)
					a.ms = bstrides([]int{s.B, 1, 1, s.S}, full)
				}
				want := make([]float32, s.B*s.Hq*s.Dv)
				got := make([]float32, len(want))
				one.sdpaFast(&a, want) // one worker: block
				four.sdpaFast(&a, got) // fewer blocks than workers: sdpaDecode
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%+v %s: out[%d] = %g, block gives %g", s, mask, i, got[i], want[i])
					}
				}
			}
		}
	})
}
