package gocpu

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"testing"

	"perch/engine/tensor"
)

// Fast kernels against the plain path. Summation order differs, so results
// are compared relative to the size of what was summed: for an output
// y = Σ a_k·b_k the error is |fast − plain| / Σ|a_k·b_k| (≈ a few float32
// epsilons; the quantized matvec's affine identity s·Σq·x + b·Σx adds a
// little). Bound: 2e-6 for dot products and 1e-5 for attention outputs
// (whose weights come out of a softmax of such dot products).
const (
	dotTol  = 2e-6
	attnTol = 1e-5
)

// kernelSets are the inner-loop sets this machine can run.
func kernelSets() []kernelSet { return append([]kernelSet{goKernels}, archKernelSets()...) }

// testedKernelSets are the sets t runs; each set of this architecture that
// this CPU lacks becomes a skipped subtest that says why, so that a set
// never passes by not running.
func testedKernelSets(t *testing.T) []kernelSet {
	missing := missingKernelSets()
	names := make([]string, 0, len(missing))
	for name := range missing {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) { t.Skipf("kernel set %s not run: %s", name, missing[name]) })
	}
	return kernelSets()
}

// withKernels runs f once per kernel set.
func withKernels(t *testing.T, f func(t *testing.T)) {
	saved := kern
	defer func() { kern = saved }()
	for _, ks := range testedKernelSets(t) {
		kern = ks
		t.Run(ks.name, f)
	}
}

// TestKernelSets says which kernel sets this machine runs and which it
// does not (make test prints these lines).
func TestKernelSets(t *testing.T) {
	for _, ks := range testedKernelSets(t) {
		t.Logf("kernel set %s: runs (fast path default: %s)", ks.name, kern.name)
	}
}

func randFloats(r *rand.Rand, n int, scale float32) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = (r.Float32()*2 - 1) * scale
	}
	return v
}

// randLinear makes a random [E, Out, In] weight (E = 0: no expert axis),
// dense (bits 0) or MLX-affine quantized, with a bias when bias is set.
func randLinear(r *rand.Rand, E, out, in, bits, gs int, bias bool) *tensor.Linear {
	lead := []int{}
	if E > 0 {
		lead = []int{E}
	}
	n := max(E, 1) * out
	l := &tensor.Linear{In: in, Out: out, Bits: bits, GroupSize: gs}
	shape := func(last int) []int { return append(append(append([]int{}, lead...), out), last) }
	if bits == 0 {
		w := newF(shape(in)...)
		copy(w.f, randFloats(r, n*in, 1))
		l.W = w
	} else {
		w := &T{shape: shape(in * bits / 32), dt: tensor.Uint32, u: make([]uint32, n*in*bits/32)}
		for i := range w.u {
			w.u[i] = r.Uint32()
		}
		s, b := newF(shape(in/gs)...), newF(shape(in/gs)...)
		for i := range s.f {
			s.f[i] = 0.01 + 0.05*r.Float32()
			b.f[i] = -s.f[i] * float32(int(1)<<(bits-1)) * (0.8 + 0.4*r.Float32())
		}
		l.W, l.Scales, l.Biases = w, s, b
	}
	if bias {
		bt := newF(append(append([]int{}, lead...), out)...)
		copy(bt.f, randFloats(r, n, 1))
		l.Bias = bt
	}
	return l
}

// linearScale is Σ_k |w[o,k]·x[row,k]| for every output, from the plain
// dequantized weights.
func linearScale(w *weight, e int, x []float32, rows int) []float32 {
	sc := make([]float32, rows*w.out)
	buf := make([]float32, w.in)
	for o := 0; o < w.out; o++ {
		w.row(e, o, buf)
		for r := 0; r < rows; r++ {
			var s float64
			for k, v := range buf {
				s += math.Abs(float64(v * x[r*w.in+k]))
			}
			sc[r*w.out+o] = float32(s)
		}
	}
	return sc
}

// relErr is max |got − want| / scale (NaNs must agree).
func relErr(t *testing.T, got, want, scale []float32) float64 {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d values, want %d", len(got), len(want))
	}
	var worst float64
	for i := range got {
		g, w := float64(got[i]), float64(want[i])
		if math.IsNaN(g) || math.IsNaN(w) {
			if math.IsNaN(g) != math.IsNaN(w) {
				t.Fatalf("value %d: %v, want %v", i, g, w)
			}
			continue
		}
		s := 1.0
		if scale != nil {
			s = math.Max(float64(scale[i]), 1e-30)
		}
		worst = math.Max(worst, math.Abs(g-w)/s)
	}
	return worst
}

var linearCases = []struct{ in, out, bits, gs int }{
	{64, 7, 4, 32}, {64, 5, 4, 64}, {128, 13, 4, 128}, {192, 33, 4, 64}, {320, 17, 4, 32},
	{1536, 40, 4, 64}, {256, 11, 4, 32}, {512, 9, 4, 256}, {2048, 3, 4, 128},
	{96, 9, 4, 32}, // In%64 != 0: the generic path
	{64, 7, 8, 32}, {96, 11, 8, 32}, {256, 21, 8, 64}, {384, 19, 8, 128}, {1536, 37, 8, 64},
	{1, 3, 0, 0}, {7, 5, 0, 0}, {33, 17, 0, 0}, {100, 23, 0, 0}, {1536, 40, 0, 0},
}

func TestLinearFastMatchesPlain(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		r := rand.New(rand.NewSource(1))
		plain, fast := New(Options{Plain: true}), New(Options{Threads: 3})
		defer plain.Close()
		defer fast.Close()
		var worst float64
		for _, c := range linearCases {
			l := randLinear(r, 0, c.out, c.in, c.bits, c.gs, c.out%2 == 1)
			w, _ := plain.checkLinear("test", l)
			for _, rows := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 31, 33, 64, 200} {
				x := randFloats(r, rows*c.in, 1)
				xt := plain.FromFloat32(x, []int{rows, c.in}, tensor.Float32)
				want := must(plain.Float32s(plain.Linear(xt, l)))
				got := must(fast.Float32s(fast.Linear(xt, l)))
				sc := linearScale(w, 0, x, rows)
				e := relErr(t, got, want, sc)
				if e > dotTol {
					t.Fatalf("In=%d Out=%d bits=%d gs=%d rows=%d: error %.3g > %g", c.in, c.out, c.bits, c.gs, rows, e, dotTol)
				}
				worst = math.Max(worst, e)
			}
		}
		t.Logf("worst relative error %.3g", worst)
	})
}

// TestLinearKBlocks takes the GEMM path through several K blocks and
// input chunks.
func TestLinearKBlocks(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		r := rand.New(rand.NewSource(2))
		plain, fast := New(Options{Plain: true}), New(Options{})
		defer plain.Close()
		defer fast.Close()
		for _, bits := range []int{0, 4, 8} {
			in, rows := 12288, 300 // K blocks of 4096 (2048); chunks of 128 (256) rows and a ragged one
			l := randLinear(r, 0, 13, in, bits, 128, false)
			w, _ := plain.checkLinear("test", l)
			if kc := w.blockK(min(rows, gemmChunk(kern.nr))); kc >= in || rows <= gemmChunk(kern.nr) {
				t.Fatalf("bits %d: one K block of %d or one chunk", bits, kc)
			}
			x := randFloats(r, rows*in, 1)
			xt := plain.FromFloat32(x, []int{rows, in}, tensor.Float32)
			want := must(plain.Float32s(plain.Linear(xt, l)))
			got := must(fast.Float32s(fast.Linear(xt, l)))
			if e := relErr(t, got, want, linearScale(w, 0, x, rows)); e > dotTol {
				t.Fatalf("bits %d: error %.3g", bits, e)
			}
		}
	})
}

func TestGatherLinearFastMatchesPlain(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		r := rand.New(rand.NewSource(3))
		plain, fast := New(Options{Plain: true}), New(Options{})
		defer plain.Close()
		defer fast.Close()
		var worst float64
		defer func() { t.Logf("worst relative error %.3g", worst) }()
		for _, c := range []struct{ E, in, out, bits, gs int }{{4, 64, 24, 4, 32}, {5, 128, 9, 8, 64}, {3, 40, 11, 0, 0}, {4, 96, 8, 4, 32}} {
			l := randLinear(r, c.E, c.out, c.in, c.bits, c.gs, true)
			w, _ := plain.checkLinear("test", l)
			for _, n := range []int{1, 3, 9, 40} {
				for _, k := range []int{1, 2} {
					for _, kx := range []int{1, k} {
						x := randFloats(r, n*kx*c.in, 1)
						ids := make([]int32, n*k)
						for i := range ids {
							ids[i] = int32(r.Intn(c.E))
						}
						xt := plain.FromFloat32(x, []int{n, kx, c.in}, tensor.Float32)
						it := plain.FromInt32(ids, []int{n, k})
						want := must(plain.Float32s(plain.GatherLinear(xt, l, it)))
						got := must(fast.Float32s(fast.GatherLinear(xt, l, it)))
						sc := make([]float32, len(want))
						for p, e := range ids {
							row := x[(p/k*kx+min(p%k, kx-1))*c.in:][:c.in]
							copy(sc[p*c.out:], linearScale(w, int(e), row, 1))
						}
						e := relErr(t, got, want, sc)
						if e > dotTol {
							t.Fatalf("%+v n=%d k=%d kx=%d: error %.3g", c, n, k, kx, e)
						}
						worst = math.Max(worst, e)
					}
				}
			}
		}
	})
}

func TestMatMulFastMatchesPlain(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		r := rand.New(rand.NewSource(4))
		plain, fast := New(Options{Plain: true}), New(Options{})
		defer plain.Close()
		defer fast.Close()
		var worst float64
		defer func() { t.Logf("worst relative error %.3g", worst) }()
		for _, c := range []struct{ a, b []int }{
			{[]int{1, 1}, []int{1, 1}}, {[]int{5, 7}, []int{7, 3}}, {[]int{13, 33}, []int{33, 16}},
			{[]int{64, 40}, []int{40, 50}}, {[]int{2, 3, 17, 9}, []int{2, 3, 9, 31}},
			{[]int{4, 1, 6, 20}, []int{1, 3, 20, 8}}, {[]int{3, 100, 64}, []int{64, 48}},
			{[]int{6, 0}, []int{0, 5}},
		} {
			fa, fb := randFloats(r, numel(c.a), 1), randFloats(r, numel(c.b), 1)
			at := plain.FromFloat32(fa, c.a, tensor.Float32)
			bt := plain.FromFloat32(fb, c.b, tensor.Float32)
			want := must(plain.Float32s(plain.MatMul(at, bt)))
			got := must(fast.Float32s(fast.MatMul(at, bt)))
			// Scale: the same product on |A|·|B|.
			abs := func(v []float32) []float32 {
				o := make([]float32, len(v))
				for i, x := range v {
					o[i] = float32(math.Abs(float64(x)))
				}
				return o
			}
			sc := must(plain.Float32s(plain.MatMul(plain.FromFloat32(abs(fa), c.a, tensor.Float32), plain.FromFloat32(abs(fb), c.b, tensor.Float32))))
			e := relErr(t, got, want, sc)
			if e > dotTol {
				t.Fatalf("%v @ %v: error %.3g", c.a, c.b, e)
			}
			worst = math.Max(worst, e)
		}
	})
}

func TestSDPAFastMatchesPlain(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		r := rand.New(rand.NewSource(5))
		plain, fast := New(Options{Plain: true}), New(Options{})
		defer plain.Close()
		defer fast.Close()
		var worst float64
		type shape struct{ B, Hq, Hk, L, S, D, Dv int }
		for _, s := range []shape{
			{1, 1, 1, 1, 1, 8, 8}, {1, 8, 1, 1, 37, 64, 64}, {2, 4, 2, 3, 3, 24, 20}, {1, 8, 1, 17, 17, 32, 32},
			{1, 2, 1, 40, 45, 16, 40}, {1, 3, 3, 5, 0, 8, 8}, {1, 2, 2, 6, 4, 8, 8}, {1, 4, 1, 70, 70, 8, 16},
		} {
			q := randFloats(r, s.B*s.Hq*s.L*s.D, 1)
			k := randFloats(r, s.B*s.Hk*s.S*s.D, 1)
			if s.L == 17 {
				q[5*s.D+3] = float32(math.NaN()) // one query row of NaN scores
			}
			v := randFloats(r, s.B*s.Hk*s.S*s.Dv, 1)
			qt := plain.FromFloat32(q, []int{s.B, s.Hq, s.L, s.D}, tensor.Float32)
			kt := plain.FromFloat32(k, []int{s.B, s.Hk, s.S, s.D}, tensor.Float32)
			vt := plain.FromFloat32(v, []int{s.B, s.Hk, s.S, s.Dv}, tensor.Float32)
			bools := make([]bool, s.L*s.S)
			for i := range bools {
				bools[i] = r.Intn(4) != 0
			}
			masks := map[string]tensor.Mask{
				"none":   {},
				"causal": {Kind: tensor.MaskCausal},
				"bool":   {Kind: tensor.MaskArray, Array: plain.FromBool(bools, []int{s.L, s.S})},
				"float":  {Kind: tensor.MaskArray, Array: plain.FromFloat32(randFloats(r, s.B*s.L*s.S, 3), []int{s.B, 1, s.L, s.S}, tensor.Float32)},
			}
			for name, m := range masks {
				scale := float32(1 / math.Sqrt(float64(s.D)))
				want := must(plain.Float32s(plain.SDPA(qt, kt, vt, scale, m)))
				got := must(fast.Float32s(fast.SDPA(qt, kt, vt, scale, m)))
				if err := fast.Err(); err != nil {
					t.Fatal(err)
				}
				e := relErr(t, got, want, nil) // v in [-1, 1] and softmax weights sum to 1
				if e > attnTol {
					t.Fatalf("%+v %s: error %.3g", s, name, e)
				}
				worst = math.Max(worst, e)
			}
		}
		t.Logf("worst absolute error %.3g", worst)
	})
}

// TestKernelSetsAgree runs the inner loops of every set on the same data.
func TestKernelSetsAgree(t *testing.T) {
	sets := testedKernelSets(t)
	if len(sets) < 2 {
		t.Skip("only the portable kernels run here")
	}
	r := rand.New(rand.NewSource(6))
	for _, gs := range []int{32, 64, 128} {
		for _, K := range []int{384, 448} { // 448: not a multiple of 128
			n := 5
			w := make([]uint32, n*K/4)
			for i := range w {
				w[i] = r.Uint32()
			}
			s, b := randFloats(r, n*K/gs+1, 0.1), randFloats(r, n*K/gs+1, 1)
			x := randFloats(r, K, 1)
			xs := make([]float32, K/gs)
			groupSums(x, xs, gs)
			run := func(ks kernelSet, op string) []float32 {
				switch op {
				case "q4dot":
					xp, y := make([]float32, K), make([]float32, n)
					ks.prepQ4(x, xp)
					ks.q4dot(w[:n*K/8], s, b, xp, xs, y, gs)
					return y
				case "q8dot":
					y := make([]float32, n)
					ks.q8dot(w, s, b, x, xs, y, gs)
					return y
				case "deq4":
					y := make([]float32, K)
					ks.deq4(w[:K/8], s, b, y, gs)
					return y
				}
				y := make([]float32, K)
				ks.deq8(w[:K/4], s, b, y, gs)
				return y
			}
			for _, op := range []string{"q4dot", "q8dot", "deq4", "deq8"} {
				if K%gs != 0 {
					continue
				}
				want := run(sets[0], op)
				// Compared relative to the largest output: dot products within
				// 1e-5; dequantized values within an ulp (identical unless the
				// compiler fuses the Go multiply-add, as GOAMD64=v3 does).
				tol, sc := 2.5e-7, make([]float32, len(want))
				if op == "q4dot" || op == "q8dot" {
					tol = 1e-5
				}
				var m float32
				for _, v := range want {
					m = max(m, float32(math.Abs(float64(v))))
				}
				for i := range sc {
					sc[i] = m
				}
				for _, ks := range sets[1:] {
					if e := relErr(t, run(ks, op), want, sc); e > tol {
						t.Fatalf("%s %s K=%d gs=%d: differs from go by %.3g", ks.name, op, K, gs, e)
					}
				}
			}
		}
	}
}

func must[V any](v V, err error) V {
	if err != nil {
		panic(fmt.Sprint(err))
	}
	return v
}

// TestExp: the softmax exponential is float32(math.Exp(float64(x))), as
// the plain path rounds it, bit for bit (-Inf gives 0, NaN stays NaN).
func TestExp(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	for _, ks := range testedKernelSets(t) {
		for _, n := range []int{0, 1, 3, 4, 5, 9, 100, 1 << 16} {
			v := make([]float32, n)
			for i := range v {
				v[i] = 3 - 110*r.Float32()
			}
			edge := []float32{float32(math.Inf(-1)), 3, 3 - 87.9, 3 - 103.5, 3 - 120, 3 - 1e-7, float32(math.NaN())}
			copy(v, edge)
			want := make([]float32, n)
			for i, x := range v {
				want[i] = float32(math.Exp(float64(x - 3)))
			}
			args := append([]float32(nil), v...)
			ks.exp(v, 3)
			for i := range v {
				if v[i] != want[i] && !(v[i] != v[i] && want[i] != want[i]) {
					t.Fatalf("%s n=%d: exp(%g) = %g, want %g", ks.name, n, args[i]-3, v[i], want[i])
				}
			}
		}
	}
}
