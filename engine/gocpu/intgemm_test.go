package gocpu

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"testing"

	"perch/engine/tensor"
)

// intKernelCase is one random block for the q4i8 kernels: a panel of 16
// weight rows and a tile of 8 input rows in the kernels' layouts.
type intKernelCase struct {
	p          []uint32
	xq         []int8
	s, b, d, x []float32 // x: xs
	bpg        int
}

func randIntKernelCase(r *rand.Rand, groups, bpg int, extreme bool) intKernelCase {
	blocks := groups * bpg
	c := intKernelCase{p: make([]uint32, blocks*intBlock/8*intCols), xq: make([]int8, blocks*intBlock*intRows), bpg: bpg}
	for i := range c.p {
		c.p[i] = r.Uint32()
		if extreme {
			c.p[i] = 0xffffffff
		}
	}
	for i := range c.xq {
		c.xq[i] = int8(r.Intn(255) - 127)
		if extreme { // a block all +127 or all −127: the int16 sums at their largest
			c.xq[i] = int8(127 - 254*(i/(intBlock*intRows)%2))
		}
	}
	c.s, c.b = randFloats(r, intCols*groups, 0.05), randFloats(r, intCols*groups, 1)
	c.d, c.x = randFloats(r, intRows*blocks, 0.02), randFloats(r, intRows*groups, 3)
	return c
}

// want is c[r][j] in float64 from the layouts' definitions, with Σ|term|.
func (c intKernelCase) want(row, j int) (want, scale float64) {
	groups := len(c.s) / intCols
	for blk := 0; blk < groups*c.bpg; blk++ {
		var isum int64
		for k := blk * intBlock; k < (blk+1)*intBlock; k++ {
			st, i := k/8, k%8
			wq := int64(c.p[st*intCols+j] >> (4 * i) & 15)    // nibble i, low first
			xv := int64(c.xq[(st*intRows+row)*8+i/2+4*(i%2)]) // even inputs, then odd
			isum += wq * xv
		}
		term := float64(isum) * float64(c.s[intCols*(blk/c.bpg)+j]) * float64(c.d[intRows*blk+row])
		want, scale = want+term, scale+math.Abs(term)
	}
	for g := 0; g < groups; g++ {
		term := float64(c.b[intCols*g+j]) * float64(c.x[intRows*g+row])
		want, scale = want+term, scale+math.Abs(term)
	}
	return want, scale
}

func (c intKernelCase) run(ks kernelSet, ldc int) []float32 {
	out := make([]float32, (intRows-1)*ldc+intCols)
	ks.q4i8(c.p, c.s, c.b, c.xq, c.d, c.x, c.bpg, out, ldc)
	return out
}

// TestIntKernel: every set's q4i8 against the same sums in float64 on the
// same quantized values, within float32 rounding of the per-block terms
// (relative to Σ|term|, as dotTol), written at stride ldc and nothing
// between the rows.
func TestIntKernel(t *testing.T) {
	r := rand.New(rand.NewSource(21))
	for _, ks := range testedKernelSets(t) {
		for _, bpg := range []int{1, 2, 4} {
			for _, groups := range []int{1, 2, 5} {
				for _, extreme := range []bool{false, true} {
					c := randIntKernelCase(r, groups, bpg, extreme)
					ldc := intCols + 3
					got := c.run(ks, ldc)
					for row := 0; row < intRows; row++ {
						for j := 0; j < ldc; j++ {
							v := got[min(row*ldc+j, len(got)-1)]
							if j >= intCols {
								if row < intRows-1 && got[row*ldc+j] != 0 {
									t.Fatalf("%s: wrote c[%d][%d] past the block", ks.name, row, j)
								}
								continue
							}
							want, scale := c.want(row, j)
							if e := math.Abs(float64(v)-want) / scale; e > dotTol {
								t.Fatalf("%s bpg=%d groups=%d extreme=%v c[%d][%d] = %g, want %g (error %.3g)", ks.name, bpg, groups, extreme, row, j, v, want, e)
							}
						}
					}
				}
			}
		}
	}
}

// TestLinearIntMatchesPlain: the integer prefill moves each output by no
// more than quantizing x does, Σ_k |w[o,k]|·d(k)/2 (d = max|x| of k's
// block / 127), plus float rounding; and it runs (it differs from the
// exact fast path).
func TestLinearIntMatchesPlain(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		r := rand.New(rand.NewSource(22))
		plain, fast, exact := New(Options{Plain: true}), New(Options{Threads: 3, IntPrefill: true}), New(Options{Threads: 3})
		defer plain.Close()
		defer fast.Close()
		defer exact.Close()
		ran := false
		for _, c := range linearCases {
			if c.bits != 4 {
				continue
			}
			l := randLinear(r, 0, c.out, c.in, c.bits, c.gs, c.out%2 == 1)
			w, _ := plain.checkLinear("test", l)
			for _, rows := range []int{8, 9, 17, 64} {
				x := randFloats(r, rows*c.in, 1)
				x[0] *= 50 // one block with a large value: its d is large
				xt := plain.FromFloat32(x, []int{rows, c.in}, tensor.Float32)
				got := must(fast.Float32s(fast.Linear(xt, l)))
				want := must(plain.Float32s(plain.Linear(xt, l)))
				ex := must(exact.Float32s(exact.Linear(xt, l)))
				ran = ran || !equalBits(got, ex)
				scale := linearScale(w, 0, x, rows)
				buf := make([]float32, c.in)
				for o := 0; o < c.out; o++ {
					w.row(0, o, buf)
					for row := 0; row < rows; row++ {
						xr := x[row*c.in:][:c.in]
						var bound float64
						for blk := 0; blk < c.in/intBlock; blk++ {
							var amax float64
							for _, v := range xr[blk*intBlock:][:intBlock] {
								amax = math.Max(amax, math.Abs(float64(v)))
							}
							for _, v := range buf[blk*intBlock:][:intBlock] {
								bound += math.Abs(float64(v)) * amax / 254
							}
						}
						bound += dotTol * float64(scale[row*c.out+o])
						i := row*c.out + o
						if e := math.Abs(float64(got[i] - want[i])); e > bound {
							t.Fatalf("%+v rows=%d y[%d][%d] = %g, plain %g: off by %.3g > %.3g", c, rows, row, o, got[i], want[i], e, bound)
						}
					}
				}
			}
		}
		if !ran {
			t.Fatal("the integer prefill never ran: every result equals the exact path's")
		}
		if err := fast.Err(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestLinearIntNonFinite: an infinite input gives NaN in the rows it
// reaches and leaves the others finite.
func TestLinearIntNonFinite(t *testing.T) {
	r := rand.New(rand.NewSource(23))
	b := New(Options{IntPrefill: true})
	defer b.Close()
	l := randLinear(r, 0, 16, 128, 4, 64, false)
	x := randFloats(r, 8*128, 1)
	x[3*128+5] = float32(math.Inf(1))
	y := must(b.Float32s(b.Linear(b.FromFloat32(x, []int{8, 128}, tensor.Float32), l)))
	for i, v := range y {
		if row := i / 16; math.IsNaN(float64(v)) != (row == 3) {
			t.Fatalf("row %d output %d = %g", row, i%16, v)
		}
	}
}

// BenchmarkPrefillLinear: E2B's gate (1536→6144) and down (6144→1536)
// 4-bit projections over 64 and 256 positions, exact float GEMM against
// the integer prefill, one thread, per assembly kernel set this CPU runs,
// side by side. GFLOP/cpu-s divides by the process's CPU time, which a
// busy machine's time slicing leaves be.
func BenchmarkPrefillLinear(b *testing.B) {
	r := rand.New(rand.NewSource(24))
	saved := kern
	defer func() { kern = saved }()
	sets := kernelSets()
	if len(sets) > 1 {
		sets = sets[1:] // the assembly sets, without the portable one
	}
	for _, sh := range []struct {
		name    string
		in, out int
	}{{"gate", 1536, 6144}, {"down", 6144, 1536}} {
		l := randLinear(r, 0, sh.out, sh.in, 4, 64, false)
		for _, L := range []int{64, 256} {
			x := randFloats(r, L*sh.in, 1)
			for _, ks := range sets {
				for _, exact := range []bool{true, false} {
					mode := "int8"
					if exact {
						mode = "exact"
					}
					b.Run(fmt.Sprintf("%s/L=%d/%s/%s", sh.name, L, ks.name, mode), func(b *testing.B) {
						kern = ks
						be := New(Options{Threads: 1, IntPrefill: !exact})
						defer be.Close()
						xt := be.FromFloat32(x, []int{L, sh.in}, tensor.Float32)
						be.Linear(xt, l) // buffers made before the clock runs
						b.ResetTimer()
						cpu0 := processCPU()
						for i := 0; i < b.N; i++ {
							be.Linear(xt, l)
						}
						cpu := (processCPU() - cpu0).Seconds() / float64(b.N)
						b.ReportMetric(2*float64(L*sh.in*sh.out)/(b.Elapsed().Seconds()/float64(b.N))/1e9, "GFLOP/s")
						b.ReportMetric(2*float64(L*sh.in*sh.out)/cpu/1e9, "GFLOP/cpu-s")
					})
				}
			}
		}
	}
}

// TestLinearIntIsQ8Activations: the integer prefill equals the exact path
// on x rounded as it quantizes it (d·round(x/d) per block of 32), within
// float rounding: it is Q8_0 activations and nothing else.
func TestLinearIntIsQ8Activations(t *testing.T) {
	r := rand.New(rand.NewSource(25))
	plain, fast := New(Options{Plain: true}), New(Options{Threads: 2, IntPrefill: true})
	defer plain.Close()
	defer fast.Close()
	for _, c := range []struct{ in, out, gs int }{{256, 24, 32}, {1536, 40, 64}, {512, 9, 128}} {
		l := randLinear(r, 0, c.out, c.in, 4, c.gs, false)
		w, _ := plain.checkLinear("test", l)
		rows := 13
		x := randFloats(r, rows*c.in, 1)
		x[7] = 40
		xr := roundQ8(x)
		got := must(fast.Float32s(fast.Linear(fast.FromFloat32(x, []int{rows, c.in}, tensor.Float32), l)))
		want := must(plain.Float32s(plain.Linear(plain.FromFloat32(xr, []int{rows, c.in}, tensor.Float32), l)))
		if e := relErr(t, got, want, linearScale(w, 0, xr, rows)); e > 1e-5 {
			t.Fatalf("%+v: int8 prefill differs from the exact path on rounded x by %.3g", c, e)
		}
	}
}

// TestQuant8: every set's quantizer writes the portable one's int8 values,
// block sums and scales bit for bit (NaN where a block holds Inf or NaN),
// on random blocks, all-zero ones, ones below intTiny, ones with Inf, NaN,
// −0, subnormals,
// values near float32's largest and values that land on halves.
func TestQuant8(t *testing.T) {
	r := rand.New(rand.NewSource(26))
	const nblk = 40
	x := randFloats(r, nblk*intBlock, 3)
	special := []float32{float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), float32(math.Copysign(0, -1)),
		1e-40, -3e-39, 3.4e38, -3.4e38}
	for i, v := range special {
		x[(i+1)*intBlock+r.Intn(intBlock)] = v
	}
	clear(x[10*intBlock : 11*intBlock])
	for i := 11 * intBlock; i < 12*intBlock; i++ { // below intTiny: zero
		x[i] *= 1e-37
	}
	for i := 12 * intBlock; i < 14*intBlock; i++ { // 127·(k+½)/127 with amax 127: halves
		x[i] = float32(i%intBlock) + 0.5 - float32(r.Intn(2))*float32(intBlock)
	}
	x[12*intBlock] = 127
	x[13*intBlock] = -127
	for blk := 15; blk < 20; blk++ {
		for i := 0; i < intBlock; i++ {
			x[blk*intBlock+i] *= float32(math.Pow(10, float64(blk-17)*12))
		}
	}
	quant := func(f func(x []float32, out []int8, d []float32, sums []int32)) ([]int8, []float32, []int32) {
		out, d, sums := make([]int8, nblk*intBlock*intRows), make([]float32, nblk*intRows), make([]int32, nblk)
		for i := range out {
			out[i] = -128 // never a quantized value: the other rows' bytes stay
		}
		f(x, out, d, sums)
		return out, d, sums
	}
	wq, wd, ws := quant(quant8Go)
	for i, v := range wq {
		if row := i / 8 % intRows; (row == 0) == (v == -128) {
			t.Fatalf("go: byte %d (row %d) = %d", i, row, v)
		}
	}
	for _, ks := range testedKernelSets(t) {
		q, d, s := quant(ks.quant8)
		for i := range wq {
			if q[i] != wq[i] {
				t.Fatalf("%s: byte %d (block %d) = %d, want %d", ks.name, i, i/(intBlock*intRows), q[i], wq[i])
			}
		}
		for blk := 0; blk < nblk; blk++ {
			got, want := d[blk*intRows], wd[blk*intRows]
			nan := want != want
			if s[blk] != ws[blk] || (nan && got == got) || (!nan && math.Float32bits(got) != math.Float32bits(want)) {
				t.Fatalf("%s: block %d: d %g sum %d, want d %g sum %d", ks.name, blk, got, s[blk], want, ws[blk])
			}
			if nan != (blk >= 1 && blk <= 3) {
				t.Fatalf("%s: block %d: d %g", ks.name, blk, got)
			}
		}
	}
}

// roundQ8 is x as the integer prefill quantizes it: d·round(x/d) per block
// of 32, d = max|x|/127.
func roundQ8(x []float32) []float32 {
	xr := make([]float32, len(x))
	for blk := 0; blk < len(x)/intBlock; blk++ {
		xb := x[blk*intBlock:][:intBlock]
		var amax float32
		for _, v := range xb {
			amax = max(amax, abs32(v))
		}
		for i, v := range xb {
			xr[blk*intBlock+i] = float32(roundAway(v*(127/amax))) * (amax / 127)
		}
	}
	return xr
}

// TestGatherLinearInt: with experts, each expert's rows (over 7 of them:
// the GEMM) go through the integer prefill against that expert's weights:
// the result is the plain path's on x rounded as it quantizes it.
func TestGatherLinearInt(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		r := rand.New(rand.NewSource(27))
		plain, fast := New(Options{Plain: true}), New(Options{Threads: 2, IntPrefill: true})
		defer plain.Close()
		defer fast.Close()
		for _, c := range []struct{ E, in, out, gs int }{{4, 256, 24, 32}, {3, 512, 40, 64}} {
			l := randLinear(r, c.E, c.out, c.in, 4, c.gs, false)
			w, _ := plain.checkLinear("test", l)
			n, k := 45, 2
			x := randFloats(r, n*c.in, 1)
			ids := make([]int32, n*k)
			for i := range ids {
				ids[i] = int32(i % c.E)
			}
			xr := roundQ8(x)
			it := plain.FromInt32(ids, []int{n, k})
			got := must(fast.Float32s(fast.GatherLinear(fast.FromFloat32(x, []int{n, 1, c.in}, tensor.Float32), l, it)))
			want := must(plain.Float32s(plain.GatherLinear(plain.FromFloat32(xr, []int{n, 1, c.in}, tensor.Float32), l, it)))
			sc := make([]float32, len(want))
			for p, e := range ids {
				copy(sc[p*c.out:], linearScale(w, int(e), xr[p/k*c.in:][:c.in], 1))
			}
			if e := relErr(t, got, want, sc); e > 1e-5 {
				t.Fatalf("%+v: int8 prefill with experts differs from the plain path on rounded x by %.3g", c, e)
			}
		}
	})
}

// FuzzQuant8: on any float32 bits, every set's quantizer writes what the
// portable one writes (d's NaN-ness, else its bits; int8 values; sums).
func FuzzQuant8(f *testing.F) {
	f.Add(make([]byte, 4*intBlock))
	f.Add([]byte{0, 0, 0x80, 0x7f, 0, 0, 0xc0, 0xff, 1, 0, 0, 0, 0, 0, 0, 0x3f})
	f.Fuzz(func(t *testing.T, raw []byte) {
		nblk := min(len(raw)/(4*intBlock)+1, 8)
		x := make([]float32, nblk*intBlock)
		for i := range x {
			if 4*i+4 <= len(raw) {
				x[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
			}
		}
		run := func(q func(x []float32, out []int8, d []float32, sums []int32)) ([]int8, []float32, []int32) {
			out, d, sums := make([]int8, nblk*intBlock*intRows), make([]float32, nblk*intRows), make([]int32, nblk)
			q(x, out, d, sums)
			return out, d, sums
		}
		wq, wd, ws := run(quant8Go)
		for _, ks := range kernelSets() {
			q, d, s := run(ks.quant8)
			for i := range wq {
				if q[i] != wq[i] {
					t.Fatalf("%s: byte %d = %d, want %d", ks.name, i, q[i], wq[i])
				}
			}
			for blk := range ws {
				got, want := d[blk*intRows], wd[blk*intRows]
				if s[blk] != ws[blk] || (want != want) != (got != got) || (want == want && math.Float32bits(got) != math.Float32bits(want)) {
					t.Fatalf("%s: block %d: d %g sum %d, want d %g sum %d", ks.name, blk, got, s[blk], want, ws[blk])
				}
			}
		}
	})
}
