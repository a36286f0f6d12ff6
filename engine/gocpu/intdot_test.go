package gocpu

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"perch/engine/tensor"
)

// intDotShapes are the integer decode's edge shapes: K with and without a
// last chunk of 64, every group size from 32 to 512, groups%16 zero and
// not (the kernels' bias tail: 8, 4 and single terms, 1 to 14 left), one
// row and many.
var intDotShapes = []struct{ K, gs, n int }{
	{64, 32, 1}, {64, 64, 3}, {128, 32, 5}, {128, 128, 2}, {192, 32, 7}, {192, 64, 1},
	{320, 64, 9}, {512, 256, 4}, {1024, 512, 3}, {1088, 32, 17}, {1536, 64, 33},
	{2048, 128, 5}, {4096, 64, 2}, {1152, 128, 3}, {2560, 32, 2}, {768, 64, 3}, {896, 64, 2},
}

// intDotCase is a random block of n 4-bit rows with bfloat16 scales and
// biases and an x quantized for them.
type intDotCase struct {
	w    []uint32
	s, b []uint16
	v    intVec
	x    []float32
}

func newIntDotCase(r *rand.Rand, K, gs, n int, extreme bool) *intDotCase {
	c := &intDotCase{w: make([]uint32, n*K/8), s: make([]uint16, n*K/gs), b: make([]uint16, n*K/gs), x: randFloats(r, K, 1)}
	for i := range c.w {
		c.w[i] = r.Uint32()
		if extreme {
			c.w[i] = 0xffffffff
		}
	}
	for i := range c.s {
		c.s[i] = bf16Bits(0.01 + 0.05*r.Float32())
		c.b[i] = bf16Bits(-8 * 0.03 * r.Float32())
	}
	if extreme { // every quantized input ±127
		for i := range c.x {
			c.x[i] = float32(1 - 2*(i/32%2))
		}
	}
	c.x[r.Intn(K)] *= 40 // one block with a large scale
	quantizeVec(c.x, gs, &c.v)
	return c
}

func bf16Bits(f float32) uint16 { return uint16(math.Float32bits(RoundBF16(f)) >> 16) }

// TestIntDecodeKernel: every set's integer decode, with bfloat16 scales
// and with float32 ones of the same values, gives the portable kernel's
// bits on every edge shape, on extreme values (every weight 15
// against ±127, where VPMADDUBSW's int16 pair sums are largest) and with
// a non-finite input (NaN in every row).
func TestIntDecodeKernel(t *testing.T) {
	for _, ks := range testedKernelSets(t) {
		r := rand.New(rand.NewSource(31))
		for _, sh := range intDotShapes {
			for _, mode := range []string{"random", "extreme", "inf", "nan"} {
				c := newIntDotCase(r, sh.K, sh.gs, sh.n, mode == "extreme")
				switch mode {
				case "inf":
					c.x[r.Intn(sh.K)] = float32(math.Inf(-1))
					quantizeVec(c.x, sh.gs, &c.v)
				case "nan":
					c.x[sh.K-1] = float32(math.NaN())
					quantizeVec(c.x, sh.gs, &c.v)
				}
				want, got, gotF := make([]float32, sh.n), make([]float32, sh.n), make([]float32, sh.n)
				q4dotI8Go(c.w, c.s, c.b, c.v.xq, c.v.dl, c.v.xs, want, sh.gs)
				for i := range got {
					got[i], gotF[i] = 12345, 12345 // values the kernel must overwrite
				}
				ks.q4dotI8(c.w, c.s, c.b, c.v.xq, c.v.dl, c.v.xs, got, sh.gs)
				// float32 scales holding the same values: the same bits
				sF, bF := make([]float32, len(c.s)), make([]float32, len(c.b))
				for i := range c.s {
					sF[i], bF[i] = bf16(c.s[i]), bf16(c.b[i])
				}
				ks.q4dotI8F(c.w, sF, bF, c.v.xq, c.v.dl, c.v.xs, gotF, sh.gs)
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s K=%d gs=%d n=%d %s: y[%d] = %g, reference %g", ks.name, sh.K, sh.gs, sh.n, mode, i, got[i], want[i])
					}
					if math.Float32bits(gotF[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s K=%d gs=%d n=%d %s, float32 scales: y[%d] = %g, reference %g", ks.name, sh.K, sh.gs, sh.n, mode, i, gotF[i], want[i])
					}
					if nonFinite := mode == "inf" || mode == "nan"; nonFinite != math.IsNaN(float64(got[i])) {
						t.Fatalf("%s K=%d gs=%d %s: y[%d] = %g", ks.name, sh.K, sh.gs, mode, i, got[i])
					}
				}
			}
		}
	}
}

// TestIntDecodeReference: the portable kernel is Σ_k (s·q_k + b)·(d·xi_k)
// in float64 over the quantized x, within float32 rounding of the terms.
func TestIntDecodeReference(t *testing.T) {
	r := rand.New(rand.NewSource(32))
	for _, sh := range intDotShapes {
		c := newIntDotCase(r, sh.K, sh.gs, sh.n, false)
		xd := dequantizeVec(&c.v, sh.K)
		y := make([]float32, sh.n)
		q4dotI8Go(c.w, c.s, c.b, c.v.xq, c.v.dl, c.v.xs, y, sh.gs)
		groups := sh.K / sh.gs
		for row := range y {
			var want, scale float64
			for k := 0; k < sh.K; k++ {
				q := c.w[(row*sh.K+k)/8] >> (4 * (k % 8)) & 0xf
				g := row*groups + k/sh.gs
				term := (float64(bf16(c.s[g]))*float64(q) + float64(bf16(c.b[g]))) * xd[k]
				want, scale = want+term, scale+math.Abs(term)
			}
			if e := math.Abs(float64(y[row])-want) / scale; e > dotTol {
				t.Fatalf("K=%d gs=%d y[%d] = %g, want %g (error %.3g)", sh.K, sh.gs, row, y[row], want, e)
			}
		}
	}
}

// dequantizeVec is d·xi per input, in natural order.
func dequantizeVec(v *intVec, K int) []float64 {
	xd := make([]float64, K)
	for c := 0; c < K; c += 128 {
		n := min(128, K-c)
		for k := 0; k < n; k++ {
			xd[c+k] = float64(v.xq[c+k%2*(n/2)+k/2]) * float64(v.dl[(c+k)/8])
		}
	}
	return xd
}

// TestQuantizeVec: each block's d is max|x|/127, its values round halves
// away from zero into the chunk's even/odd order, xs sums d·Σxi per group,
// and a block too small for 127/max to be finite quantizes to zeros (no
// NaN, no panic).
func TestQuantizeVec(t *testing.T) {
	x := make([]float32, 192) // a chunk of 128 and a last one of 64
	for i := range x[:32] {
		x[i] = float32(i) - 15.5 // block 0: max 15.5
	}
	x[40] = 1e-40              // block 1 subnormal: 127/x overflows
	x[70], x[71] = 127, -0.5   // block 2: d = 1, -0.5 rounds away from zero
	x[128+9], x[128+10] = 2, 1 // block 4: 1·127/2 = 63.5 rounds to 64
	var v intVec
	quantizeVec(x, 64, &v)
	xd := dequantizeVec(&v, len(x))
	d0 := float32(15.5) / 127
	if v.dl[0] != d0 || v.dl[3] != d0 || v.dl[4] == d0 || v.dl[8] != 1 {
		t.Fatalf("lane scales %v, want %g on lanes 0..3 and 1 on 8..11", v.dl[:12], d0)
	}
	id := 127 / float32(15.5)
	if v.xq[0] != -127 || v.xq[64] != int8(roundAway(-14.5*id)) || v.xq[64+15] != 127 {
		t.Fatalf("block 0, even inputs then odd ones: %v … %v", v.xq[:16], v.xq[64:80])
	}
	for k := 32; k < 64; k++ {
		if xd[k] != 0 {
			t.Fatalf("subnormal block: x[%d] quantizes to %g", k, xd[k])
		}
	}
	if v.xq[35] != 127 || v.xq[64+35] != -1 {
		t.Fatalf("x[70] = 127 → %d (want 127), x[71] = -0.5 → %d (want -1)", v.xq[35], v.xq[64+35])
	}
	if v.xq[128+32+4] != 127 || v.xq[128+5] != 64 {
		t.Fatalf("last chunk (halves 32 apart): x[137] = 2 → %d (want 127), x[138] = 1 → %d (want 64)", v.xq[128+32+4], v.xq[128+5])
	}
	var sum0 int32
	for k := 0; k < 16; k++ {
		sum0 += int32(v.xq[k]) + int32(v.xq[64+k])
	}
	if want := d0 * float32(sum0); v.xs[0] != want || v.xs[1] != 126 {
		t.Fatalf("group sums %v, want [%g 126 …]", v.xs, want)
	}
}

// TestLinearIntDecode: with IntDecode a Linear of up to matvecMaxRows rows
// is the plain path on x rounded as the integer decode rounds it (d·xi per
// block of 32) within float rounding, gives the same bits on every kernel
// set and with float32 scales of the same values, and runs (it differs
// from the exact path); layouts it does not cover (8-bit, IEEE-half
// scales) stay exact.
func TestLinearIntDecode(t *testing.T) {
	r := rand.New(rand.NewSource(33))
	plain := New(Options{Plain: true})
	defer plain.Close()
	ref := map[string][]float32{}
	withKernels(t, func(t *testing.T) {
		fast, exact := New(Options{Threads: 3, IntDecode: true}), New(Options{Threads: 3})
		defer fast.Close()
		defer exact.Close()
		r.Seed(33)
		ran := false
		for _, c := range linearCases {
			l := randLinear(r, 0, c.out, c.in, c.bits, c.gs, c.out%2 == 1)
			half, twin := halfLinear(plain, l, false)
			halfF16, _ := halfLinear(plain, l, true)
			w, _ := plain.checkLinear("test", half)
			for _, rows := range []int{1, 2, 7} {
				x := randFloats(r, rows*c.in, 1)
				x[0] *= 50
				xt := plain.FromFloat32(x, []int{rows, c.in}, tensor.Float32)
				got := must(fast.Float32s(fast.Linear(xt, half)))
				ex := must(exact.Float32s(exact.Linear(xt, half)))
				covered := w.intDecodeLayout()
				if key := fmt.Sprint(c, rows); covered {
					if want, ok := ref[key]; ok && !equalBits(got, want) {
						t.Fatalf("%+v rows=%d: kernel set %s gives other bits than the first set", c, rows, kern.name)
					}
					ref[key] = got
				}
				if !covered && !equalBits(got, ex) {
					t.Fatalf("%+v rows=%d: a layout the integer decode does not cover changed", c, rows)
				}
				if !equalBits(must(fast.Float32s(fast.Linear(xt, halfF16))), must(exact.Float32s(exact.Linear(xt, halfF16)))) {
					t.Fatalf("%+v rows=%d: IEEE-half scales left the exact path", c, rows)
				}
				if !equalBits(must(fast.Float32s(fast.Linear(xt, twin))), got) {
					t.Fatalf("%+v rows=%d: float32 scales of the same values give other bits", c, rows)
				}
				if !covered {
					continue
				}
				ran = ran || !equalBits(got, ex)
				// x as the integer decode rounds it, d·xi per block of 32,
				// through the plain path: the same sums within float rounding
				xr := make([]float32, len(x))
				var v intVec
				for row := 0; row < rows; row++ {
					quantizeVec(x[row*c.in:(row+1)*c.in], c.gs, &v)
					for k, f := range dequantizeVec(&v, c.in) {
						xr[row*c.in+k] = float32(f)
					}
				}
				want := must(plain.Float32s(plain.Linear(plain.FromFloat32(xr, []int{rows, c.in}, tensor.Float32), half)))
				if e := relErr(t, got, want, linearScale(w, 0, xr, rows)); e > 1e-5 {
					t.Fatalf("%+v rows=%d: int8 decode differs from the plain path on rounded x by %.3g", c, rows, e)
				}
			}
		}
		if !ran {
			t.Fatal("the integer decode never ran: every result equals the exact path's")
		}
		if err := fast.Err(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestLinearIntDecodeNonFinite: an infinite input gives NaN in the rows
// it reaches and leaves the other rows finite.
func TestLinearIntDecodeNonFinite(t *testing.T) {
	r := rand.New(rand.NewSource(34))
	b := New(Options{IntDecode: true})
	defer b.Close()
	l, _ := halfLinear(b, randLinear(r, 0, 16, 128, 4, 64, false), false)
	x := randFloats(r, 3*128, 1)
	x[1*128+5] = float32(math.Inf(1))
	y := must(b.Float32s(b.Linear(b.FromFloat32(x, []int{3, 128}, tensor.Float32), l)))
	for i, v := range y {
		if row := i / 16; math.IsNaN(float64(v)) != (row == 1) {
			t.Fatalf("row %d output %d = %g", row, i%16, v)
		}
	}
}

// BenchmarkDecodeLinear: one row (a decode step) through a 4-bit 1536→512
// matrix that stays in L2 (the kernels' compute ceiling), E2B's gate
// (1536→6144), down (6144→1536) and tied head (1536→65536, a quarter of
// the vocabulary: streamed from memory), bfloat16 scales as the checkpoints store them, the
// exact matvec against the integer decode, per kernel set and for 1 and 2
// workers, side by side. wGB/s counts the bytes read: packed words and
// 2-byte scales and biases; wGB/cpu-s divides by the process's CPU time
// instead (what a busy machine's time slicing leaves be; with 2 threads it
// includes the workers' polling).
//
//	go test -run '^$' -bench DecodeLinear -benchtime 20x ./engine/gocpu
func BenchmarkDecodeLinear(b *testing.B) {
	r := rand.New(rand.NewSource(35))
	saved := kern
	defer func() { kern = saved }()
	for _, sh := range []struct {
		name    string
		in, out int
	}{{"l2", 1536, 512}, {"gate", 1536, 6144}, {"down", 6144, 1536}, {"head", 1536, 65536}} {
		be := New(Options{Plain: true})
		l, _ := halfLinear(be, randLinear(r, 0, sh.out, sh.in, 4, 64, false), false)
		be.Close()
		wbytes := float64(sh.out*sh.in/2 + 2*2*sh.out*sh.in/64)
		x := randFloats(r, sh.in, 1)
		for _, ks := range archKernelSets() {
			for _, threads := range []int{1, 2} {
				for _, intDecode := range []bool{false, true} {
					mode := "exact"
					if intDecode {
						mode = "int8"
					}
					b.Run(fmt.Sprintf("%s/%s/threads=%d/%s", sh.name, ks.name, threads, mode), func(b *testing.B) {
						kern = ks
						be := New(Options{Threads: threads, IntDecode: intDecode})
						defer be.Close()
						xt := be.FromFloat32(x, []int{1, sh.in}, tensor.Float32)
						b.ResetTimer()
						cpu0 := processCPU()
						for i := 0; i < b.N; i++ {
							be.Linear(xt, l)
						}
						cpu := (processCPU() - cpu0).Seconds() / float64(b.N)
						b.ReportMetric(wbytes/(b.Elapsed().Seconds()/float64(b.N))/1e9, "wGB/s")
						b.ReportMetric(wbytes/cpu/1e9, "wGB/cpu-s")
					})
				}
			}
		}
	}
}

// TestQuantizeVecSets: every set's quantizer gives the portable one's
// bytes, scales and group sums on the edge shapes, with blocks that are
// zero, subnormal, hold ±Inf or NaN, or values on a rounding half.
func TestQuantizeVecSets(t *testing.T) {
	same := func(a, b float32) bool {
		return math.Float32bits(a) == math.Float32bits(b) || a != a && b != b
	}
	for _, ks := range testedKernelSets(t) {
		r := rand.New(rand.NewSource(36))
		for _, sh := range intDotShapes {
			for trial := 0; trial < 4; trial++ {
				x := randFloats(r, sh.K, float32(math.Pow(10, float64(r.Intn(9)-4))))
				blocks := sh.K / 32
				special := []float32{0, 1e-40, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())}
				for i := 0; i < 3; i++ {
					blk := r.Intn(blocks)
					v := special[r.Intn(len(special))]
					for k := 0; k < 32; k++ {
						if v == 0 || v == 1e-40 {
							x[32*blk+k] = v * float32(k%3)
						}
					}
					x[32*blk+r.Intn(32)] = v
				}
				x[r.Intn(sh.K)] = 127.0 / 2 // with max 127 in its block: a rounding half
				x[r.Intn(sh.K)] = 127
				n := sh.K / sh.gs
				var want, got intVec
				want.xq, want.dl, want.xs = make([]int8, sh.K), make([]float32, sh.K/8), make([]float32, n)
				got.xq, got.dl, got.xs = make([]int8, sh.K), make([]float32, sh.K/8), make([]float32, n)
				quantizeVecGo(x, sh.gs, want.xq, want.dl, want.xs)
				ks.quantVec(x, sh.gs, got.xq, got.dl, got.xs)
				for i := range want.xq {
					if got.xq[i] != want.xq[i] {
						t.Fatalf("%s K=%d gs=%d: xq[%d] = %d, want %d", ks.name, sh.K, sh.gs, i, got.xq[i], want.xq[i])
					}
				}
				for i := range want.dl {
					if !same(got.dl[i], want.dl[i]) {
						t.Fatalf("%s K=%d gs=%d: dl[%d] = %g, want %g", ks.name, sh.K, sh.gs, i, got.dl[i], want.dl[i])
					}
				}
				for i := range want.xs {
					if !same(got.xs[i], want.xs[i]) {
						t.Fatalf("%s K=%d gs=%d: xs[%d] = %g, want %g", ks.name, sh.K, sh.gs, i, got.xs[i], want.xs[i])
					}
				}
			}
		}
	}
}
