package gocpu

import "math"

// Inner loops of the fast path. The drivers (kernels.go, kernels_gemm.go,
// kernels_attn.go) call them through kern: the portable Go versions below,
// or AVX2/FMA assembly on amd64 CPUs that have it (kernels_amd64.go), or
// on arm64 the portable set with a NEON integer prefill (kernels_arm64.go). Both
// sets compute the same sums on the same layouts, in different orders.

// kernelSet is one implementation of the inner loops.
type kernelSet struct {
	name string
	// nr is the GEMM tile width: B is packed nr columns wide and gemm
	// covers up to nr columns per call (16, or 32 with AVX-512).
	nr int
	// prepQ4 writes x (len%64 == 0) into xp in the order q4dot reads it.
	prepQ4 func(x, xp []float32)
	// q4dot sets y[r] for len(y) consecutive 4-bit rows of K = len(xp)
	// inputs (w: K/8 words per row; s, b: K/gs per row) with the affine
	// identity Σ(q·s+b)·x = s·Σq·x + b·Σx per group; xp is x prepared by
	// prepQ4 and xs the group sums of x. K%64 == 0, gs a power of two ≥ 32.
	q4dot func(w []uint32, s, b, xp, xs, y []float32, gs int)
	// q8dot: as q4dot for 8-bit rows (K/4 words per row), x in natural
	// order; gs%32 == 0.
	q8dot func(w []uint32, s, b, x, xs, y []float32, gs int)
	// q4dotH and q8dotH are q4dot and q8dot with bfloat16 scales and
	// biases, widened as they are read.
	q4dotH, q8dotH func(w []uint32, s, b []uint16, x, xs, y []float32, gs int)
	// deq4 dequantizes K = len(out) values of one 4-bit row segment into
	// out in permuteQ4's 8-lane order (out[64j+8k+i] is weight 64j+8i+k),
	// each q·s+b as the plain path rounds it. K%64 == 0, gs as for q4dot.
	deq4 func(w []uint32, s, b, out []float32, gs int)
	// deq8: as deq4 for 8-bit, natural order; gs%8 == 0.
	deq8 func(w []uint32, s, b, out []float32, gs int)
	// gemm sets c[32i+j] = Σ_{p<k} a[i][p]·b[p·ldb+j] for i < 6 and at
	// least j < cols (cols ≤ nr): a 6×cols block of A·B with A given by
	// rows and B by rows of stride ldb, each holding nr readable values.
	gemm func(a *[6][]float32, b []float32, ldb, k, cols int, c *gemmOut)
	// dot sets y[r] = Σ_p w[r·K+p]·x[p] for len(y) rows of K = len(x).
	dot func(w, x, y []float32)
	// exp sets v[i] = float32(exp(float64(v[i] − m))), rounded as the plain
	// path's softmax rounds it (NaN stays NaN, −Inf gives 0).
	exp func(v []float32, m float32)
	// dotBF16 and dotF16 are dot with bfloat16 or IEEE-half rows w,
	// widened exactly to float32 as they are read.
	dotBF16, dotF16 func(w []uint16, x, y []float32)
	// sum64 is Σ a[i] (wrapping): the bandwidth probe's loop.
	sum64 func(a []uint64) uint64
	// tanh sets v[i] = tanh(v[i]) in float32 (within a few ulps of the
	// plain path's float64 math.Tanh; NaN stays NaN).
	tanh func(v []float32)
	// widenBF16 and widenF16 set dst[i] to the float32 value of src[i]
	// (len(src) ≥ len(dst)).
	widenBF16, widenF16 func(dst []float32, src []uint16)
	// q4i8 is the integer prefill's kernel: the 8×16 block c[r·ldc+j] for
	// a tile of 8 int8 input rows r and a panel of 16 4-bit weight rows j,
	// groups of bpg blocks of 32 (layouts and sums: intgemm.go; len(s)/16
	// groups).
	q4i8 func(p []uint32, s, b []float32, xq []int8, d, xs []float32, bpg int, c []float32, ldc int)
	// q4dotI8 is the integer decode's matvec: y[r] for len(y) 4-bit rows
	// with bfloat16 scales and biases against x quantized by quantizeVec
	// (lanes, sums and order: intdot.go; every set gives the same bits).
	q4dotI8 func(w []uint32, s, b []uint16, xq []int8, dl, xs, y []float32, gs int)
	// q4dotI8F is q4dotI8 with float32 scales and biases.
	q4dotI8F func(w []uint32, s, b []float32, xq []int8, dl, xs, y []float32, gs int)
	// quantVec is the integer decode's quantizer of x into xq, dl and xs
	// (xs zeroed; every set gives quantizeVecGo's values).
	quantVec func(x []float32, gs int, xq []int8, dl, xs []float32)
	// quant8 quantizes blocks of 32 values for the integer prefill
	// (quant8Go says how).
	quant8 func(x []float32, out []int8, d []float32, sums []int32)
}

// gemmOut is gemm's output block: 6 rows of stride 32.
type gemmOut = [6 * 32]float32

var goKernels = kernelSet{name: "go", nr: 16, prepQ4: prepQ4x8, q4dot: q4dotGo, q8dot: q8dotGo,
	q4dotH: widenedQ(q4dotGo), q8dotH: widenedQ(q8dotGo), deq4: deq4Go, deq8: deq8Go,
	gemm: gemmGo, dot: dotGo, exp: expGo, dotBF16: dotBF16Go, dotF16: dotF16Go, sum64: sum64Go, tanh: tanhGo, widenBF16: widenBF16Go, widenF16: widenF16Go, q4i8: q4i8Go, quant8: quant8Go,
	q4dotI8: q4dotI8Go[uint16], q4dotI8F: q4dotI8Go[float32], quantVec: quantizeVecGo}

// kern is the set the fast path uses.
var kern = goKernels

// q4scale undoes, in x, the position of nibble k that q4dot leaves in place
// (masked, not shifted); nibble 7 is shifted down instead.
var q4scale = [8]float32{1, 1.0 / (1 << 4), 1.0 / (1 << 8), 1.0 / (1 << 12), 1.0 / (1 << 16), 1.0 / (1 << 20), 1.0 / (1 << 24), 1}

// permuteQ4 writes x (len%(8·lanes) == 0) in a q4dot order: blocks of lanes
// words, lane i holding word i, so xp[8·lanes·j + lanes·k + i] =
// x[8·lanes·j + 8i + k]·q4scale[k].
func permuteQ4(x, xp []float32, lanes int) {
	n := 8 * lanes
	for j := 0; j+n <= len(x); j += n {
		for k := 0; k < 8; k++ {
			sc := q4scale[k]
			for i := 0; i < lanes; i++ {
				xp[j+lanes*k+i] = x[j+8*i+k] * sc
			}
		}
	}
}

func prepQ4x8(x, xp []float32) { permuteQ4(x, xp, 8) }

// groupSums sets xs[g] = Σ x[g·gs : (g+1)·gs].
func groupSums(x, xs []float32, gs int) {
	for g := range xs {
		var s float32
		for _, v := range x[g*gs : (g+1)*gs] {
			s += v
		}
		xs[g] = s
	}
}

func q4dotGo(w []uint32, s, b, xp, xs, y []float32, gs int) {
	K := len(xp)
	words, groups := K/8, K/gs
	for r := range y {
		wr := w[r*words:][:words]
		sr, br := s[r*groups:][:groups], b[r*groups:][:groups]
		var acc, part float32 // part: the current group's Σq·x (gs ≥ 64)
		for j := 0; j < K/64; j++ {
			wb, xb := (*[8]uint32)(wr[8*j:]), (*[64]float32)(xp[64*j:])
			var half [2]float32 // lanes 0-3 and 4-7 (the two groups when gs = 32)
			for i, q := range wb {
				half[i/4] += float32(int32(q&0xf))*xb[i] + float32(int32(q&0xf0))*xb[8+i] +
					float32(int32(q&0xf00))*xb[16+i] + float32(int32(q&0xf000))*xb[24+i] +
					float32(int32(q&0xf0000))*xb[32+i] + float32(int32(q&0xf00000))*xb[40+i] +
					float32(int32(q&0xf000000))*xb[48+i] + float32(int32(q>>28))*xb[56+i]
			}
			if gs == 32 {
				acc += sr[2*j]*half[0] + br[2*j]*xs[2*j] + sr[2*j+1]*half[1] + br[2*j+1]*xs[2*j+1]
				continue
			}
			part += half[0] + half[1]
			if g := 64 * (j + 1) / gs; 64*(j+1)%gs == 0 {
				acc += sr[g-1]*part + br[g-1]*xs[g-1]
				part = 0
			}
		}
		y[r] = acc
	}
}

func q8dotGo(w []uint32, s, b, x, xs, y []float32, gs int) {
	K := len(x)
	words, groups, wpg := K/4, K/gs, gs/4
	for r := range y {
		wr := w[r*words:][:words]
		sr, br := s[r*groups:][:groups], b[r*groups:][:groups]
		var acc float32
		for g := 0; g < groups; g++ {
			var p0, p1 float32
			xg := x[g*gs:][:gs]
			for i, q := range wr[g*wpg:][:wpg] {
				xq := (*[4]float32)(xg[4*i:])
				p0 += float32(int32(q&255))*xq[0] + float32(int32(q>>8&255))*xq[1]
				p1 += float32(int32(q>>16&255))*xq[2] + float32(int32(q>>24))*xq[3]
			}
			acc += sr[g]*(p0+p1) + br[g]*xs[g]
		}
		y[r] = acc
	}
}

func deq4Go(w []uint32, s, b, out []float32, gs int) {
	for j := 0; j+64 <= len(out); j += 64 {
		ob := (*[64]float32)(out[j:])
		for i, q := range (*[8]uint32)(w[j/8:]) {
			g := (j + 8*i) / gs
			sc, bc := s[g], b[g]
			ob[i] = float32(int32(q&15))*sc + bc
			ob[8+i] = float32(int32(q>>4&15))*sc + bc
			ob[16+i] = float32(int32(q>>8&15))*sc + bc
			ob[24+i] = float32(int32(q>>12&15))*sc + bc
			ob[32+i] = float32(int32(q>>16&15))*sc + bc
			ob[40+i] = float32(int32(q>>20&15))*sc + bc
			ob[48+i] = float32(int32(q>>24&15))*sc + bc
			ob[56+i] = float32(int32(q>>28))*sc + bc
		}
	}
}

func deq8Go(w []uint32, s, b, out []float32, gs int) {
	for k := 0; k+4 <= len(out); k += 4 {
		q, g := w[k/4], k/gs
		sc, bc := s[g], b[g]
		o := (*[4]float32)(out[k:])
		o[0] = float32(int32(q&255))*sc + bc
		o[1] = float32(int32(q>>8&255))*sc + bc
		o[2] = float32(int32(q>>16&255))*sc + bc
		o[3] = float32(int32(q>>24))*sc + bc
	}
}

func gemmGo(a *[6][]float32, b []float32, ldb, k, cols int, c *gemmOut) {
	for i := range a {
		gemmRowGo(a[i][:k], b, ldb, (*[16]float32)(c[32*i:]))
	}
}

// gemmRowGo sets c[j] = Σ_p a[p]·b[p·ldb+j] for j < 16, in registers.
func gemmRowGo(a, b []float32, ldb int, c *[16]float32) {
	var c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15 float32
	for p, av := range a {
		bp := (*[16]float32)(b[p*ldb:])
		c0 += av * bp[0]
		c1 += av * bp[1]
		c2 += av * bp[2]
		c3 += av * bp[3]
		c4 += av * bp[4]
		c5 += av * bp[5]
		c6 += av * bp[6]
		c7 += av * bp[7]
		c8 += av * bp[8]
		c9 += av * bp[9]
		c10 += av * bp[10]
		c11 += av * bp[11]
		c12 += av * bp[12]
		c13 += av * bp[13]
		c14 += av * bp[14]
		c15 += av * bp[15]
	}
	*c = [16]float32{c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15}
}

func dotGo(w, x, y []float32) {
	for r := range y {
		y[r] = dot(x, w[r*len(x):][:len(x)])
	}
}

// widenedQ is a q4dotH/q8dotH that widens the bfloat16 scales and biases
// and calls dot.
func widenedQ(dot func(w []uint32, s, b, x, xs, y []float32, gs int)) func(w []uint32, s, b []uint16, x, xs, y []float32, gs int) {
	return func(w []uint32, s, b []uint16, x, xs, y []float32, gs int) {
		n := len(y) * (len(x) / gs)
		sf, bf := make([]float32, n), make([]float32, n)
		widenBF16Go(sf, s)
		widenBF16Go(bf, b)
		dot(w, sf, bf, x, xs, y, gs)
	}
}

func dotBF16Go(w []uint16, x, y []float32) {
	for r := range y {
		dotHRow(w[r*len(x):][:len(x)], x, &y[r], false)
	}
}

func dotF16Go(w []uint16, x, y []float32) {
	for r := range y {
		dotHRow(w[r*len(x):][:len(x)], x, &y[r], true)
	}
}

// dotHRow sets *y = Σ widen(w[k])·x[k] in dot's order, widening 64 values
// at a time.
func dotHRow(w []uint16, x []float32, y *float32, f16 bool) {
	var buf [64]float32
	var s0, s1, s2, s3 float32
	for k0 := 0; k0 < len(x); k0 += len(buf) {
		n := min(len(buf), len(x)-k0)
		wb, xb := buf[:n], x[k0:k0+n]
		if f16 {
			widenF16Go(wb, w[k0:])
		} else {
			widenBF16Go(wb, w[k0:])
		}
		k := 0
		for ; k+4 <= n; k += 4 {
			s0 += xb[k] * wb[k]
			s1 += xb[k+1] * wb[k+1]
			s2 += xb[k+2] * wb[k+2]
			s3 += xb[k+3] * wb[k+3]
		}
		for ; k < n; k++ {
			s0 += xb[k] * wb[k]
		}
	}
	*y = (s0 + s1) + (s2 + s3)
}

// dot with four accumulators.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	k := 0
	for ; k+4 <= len(a); k += 4 {
		s0 += a[k] * b[k]
		s1 += a[k+1] * b[k+1]
		s2 += a[k+2] * b[k+2]
		s3 += a[k+3] * b[k+3]
	}
	for ; k < len(a); k++ {
		s0 += a[k] * b[k]
	}
	return (s0 + s1) + (s2 + s3)
}

func expGo(v []float32, m float32) {
	for i, x := range v {
		v[i] = float32(math.Exp(float64(x - m)))
	}
}

// tanh ≈ x·P(x²)/Q(x²) on x clamped to ±7.905311 (beyond, tanh rounds to
// ±1), x itself for |x| < 4e-4: the rational fit of Eigen's fast float
// tanh, in float32.
const (
	tanhClamp                                                = 7.90531110763549805
	tanhA13, tanhA11, tanhA9, tanhA7, tanhA5, tanhA3, tanhA1 = -2.76076847742355e-16, 2.00018790482477e-13, -8.60467152213735e-11, 5.12229709037114e-08, 1.48572235717979e-05, 6.37261928875436e-04, 4.89352455891786e-03
	tanhB6, tanhB4, tanhB2, tanhB0                           = 1.19825839466702e-06, 1.18534705686654e-04, 2.26843463243900e-03, 4.89352518554385e-03
)

func tanhGo(v []float32) {
	for i, x := range v {
		if x != x || (x < 4e-4 && x > -4e-4) {
			continue
		}
		c := min(max(x, -tanhClamp), tanhClamp)
		x2 := c * c
		p := float32(tanhA13)
		for _, a := range [...]float32{tanhA11, tanhA9, tanhA7, tanhA5, tanhA3, tanhA1} {
			p = p*x2 + a
		}
		q := (float32(tanhB6)*x2+tanhB4)*x2 + tanhB2
		q = q*x2 + tanhB0
		v[i] = c * p / q
	}
}
