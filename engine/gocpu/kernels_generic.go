package gocpu

import "math"

// Inner loops of the fast path. The drivers (kernels.go, kernels_gemm.go,
// kernels_attn.go) call them through kern: the portable Go versions below,
// or AVX2/FMA assembly on amd64 CPUs that have it (kernels_amd64.go). Both
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
	// deq4 dequantizes K = len(out) values of one 4-bit row segment into
	// out in permuteQ4's 8-lane order (out[64j+8k+i] is weight 64j+8i+k),
	// each q·s+b as the plain path rounds it. K%64 == 0, gs as for q4dot.
	deq4 func(w []uint32, s, b, out []float32, gs int)
	// deq8: as deq4 for 8-bit, natural order; gs%8 == 0.
	deq8 func(w []uint32, s, b, out []float32, gs int)
	// gemm sets c[32i+j] = Σ_{p<k} a[i][p]·b[p·ldb+j] for i < 6 and at
	// least j < cols (cols ≤ nr): a 6×cols block of A·B with A given by
	// rows and B by rows of stride ldb.
	gemm func(a *[6][]float32, b []float32, ldb, k, cols int, c *gemmOut)
	// dot sets y[r] = Σ_p w[r·K+p]·x[p] for len(y) rows of K = len(x).
	dot func(w, x, y []float32)
	// expSum sets v[i] = exp(v[i] − m) and returns Σ v[i]; every v[i] ≤ m,
	// −Inf or NaN (which stays NaN), m finite. Float32 polynomial, ~1 ulp.
	expSum func(v []float32, m float32) float32
}

// gemmOut is gemm's output block: 6 rows of stride 32.
type gemmOut = [6 * 32]float32

var goKernels = kernelSet{"go", 16, prepQ4x8, q4dotGo, q8dotGo, deq4Go, deq8Go, gemmGo, dotGo, expSumGo}

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
	words, groups, wpg := K/8, K/gs, gs/8
	for r := range y {
		wr := w[r*words:][:words]
		sr, br := s[r*groups:][:groups], b[r*groups:][:groups]
		var acc float32
		for g := 0; g < groups; g++ {
			var p0, p1 float32
			for j := g * wpg; j < (g+1)*wpg; j++ {
				q := wr[j]
				xq := xp[j/8*64+j%8:][:57]
				p0 += float32(q&0xf)*xq[0] + float32(q&0xf0)*xq[8] + float32(q&0xf00)*xq[16] + float32(q&0xf000)*xq[24]
				p1 += float32(q&0xf0000)*xq[32] + float32(q&0xf00000)*xq[40] + float32(q&0xf000000)*xq[48] + float32(q>>28)*xq[56]
			}
			acc += sr[g]*(p0+p1) + br[g]*xs[g]
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
			for j := g * wpg; j < (g+1)*wpg; j++ {
				q, xq := wr[j], x[4*j:][:4]
				p0 += float32(q&255)*xq[0] + float32(q>>8&255)*xq[1]
				p1 += float32(q>>16&255)*xq[2] + float32(q>>24)*xq[3]
			}
			acc += sr[g]*(p0+p1) + br[g]*xs[g]
		}
		y[r] = acc
	}
}

func deq4Go(w []uint32, s, b, out []float32, gs int) {
	for j := 0; j+64 <= len(out); j += 64 {
		for i := 0; i < 8; i++ {
			q := w[j/8+i]
			g := (j + 8*i) / gs
			for k := 0; k < 8; k++ {
				out[j+8*k+i] = float32(q>>(4*k)&15)*s[g] + b[g]
			}
		}
	}
}

func deq8Go(w []uint32, s, b, out []float32, gs int) {
	for k := range out {
		q := w[k/4] >> (8 * (k % 4)) & 255
		g := k / gs
		out[k] = float32(q)*s[g] + b[g]
	}
}

func gemmGo(a *[6][]float32, b []float32, ldb, k, cols int, c *gemmOut) {
	for i := range a {
		var acc [16]float32
		for p, av := range a[i][:k] {
			for j, bv := range b[p*ldb:][:cols] {
				acc[j] += av * bv
			}
		}
		copy(c[32*i:32*i+16], acc[:])
	}
}

func dotGo(w, x, y []float32) {
	for r := range y {
		y[r] = dot(x, w[r*len(x):][:len(x)])
	}
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

// expSumGo is expSum8's polynomial (Cephes expf) in scalar Go.
func expSumGo(v []float32, m float32) float32 {
	var s float32
	for i, x := range v {
		if x -= m; x < -88 { // NaN stays NaN
			x = -88
		}
		n := float32(math.RoundToEven(float64(x * 1.44269504088896341)))
		r := x - n*0.693359375 + n*2.12194440e-4
		p := ((((1.9875691500e-4*r+1.3981999507e-3)*r+8.3334519073e-3)*r+4.1665795894e-2)*r+1.6666665459e-1)*r + 5.0000001201e-1
		e := (p*r*r + r + 1) * math.Float32frombits(uint32(int32(n)+127)<<23)
		v[i] = e
		s += e
	}
	return s
}
