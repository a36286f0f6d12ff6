package gocpu

import (
	"fmt"
	"math/rand"
	"testing"
	"unsafe"

	"perch/engine/tensor"
)

// Plain and fast side by side in one run (compare within a run: this
// machine is shared). Weight GB/s counts the bytes the kernels read: packed
// words plus float32 scales and biases (or float32 dense weights).
//
//	go test -run '^$' -bench 'Linear|MatMul|SDPA' -benchtime 3x ./engine/gocpu
//
// Each runs plain, then the fast path with every kernel set the CPU has.

func benchLinear(b *testing.B, rows, out, in, bits, gs int) {
	r := rand.New(rand.NewSource(1))
	l := randLinear(r, 0, out, in, bits, gs, false)
	wbytes := float64(out * in * 4)
	if bits != 0 {
		wbytes = float64(out*in*bits/8 + 2*4*out*in/gs)
	}
	x := randFloats(r, rows*in, 1)
	if rows == 1 && bits != 0 {
		b.Run("read", func(b *testing.B) { benchRead(b, l, wbytes) })
	}
	eachMode(b, func(b *testing.B, be *Backend) {
		xt := be.FromFloat32(x, []int{rows, in}, tensor.Float32)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			be.Linear(xt, l)
		}
		sec := b.Elapsed().Seconds() / float64(b.N)
		b.ReportMetric(wbytes/sec/1e9, "wGB/s")
		b.ReportMetric(2*float64(rows*out*in)/sec/1e9, "GFLOP/s")
	})
}

// eachMode runs f on the plain path, then the fast path with each kernel
// set this machine runs (go, avx2, avx512).
func eachMode(b *testing.B, f func(b *testing.B, be *Backend)) {
	b.Run("plain", func(b *testing.B) {
		be := New(Options{Plain: true})
		defer be.Close()
		f(b, be)
	})
	saved := kern
	defer func() { kern = saved }()
	for _, ks := range kernelSets() {
		kern = ks
		b.Run(ks.name, func(b *testing.B) {
			be := New(Options{})
			defer be.Close()
			f(b, be)
		})
	}
}

// benchRead is the roofline: the same weight bytes summed as uint64 words
// on all workers.
func benchRead(b *testing.B, l *tensor.Linear, wbytes float64) {
	be := New(Options{})
	defer be.Close()
	w, s, bi := l.W.(*T).u, l.Scales.(*T).f, l.Biases.(*T).f
	words := func(p unsafe.Pointer, n int) []uint64 { return unsafe.Slice((*uint64)(p), n/2) }
	arrays := [][]uint64{words(unsafe.Pointer(&w[0]), len(w)), words(unsafe.Pointer(&s[0]), len(s)), words(unsafe.Pointer(&bi[0]), len(bi))}
	sums := make([]uint64, be.pool.n)
	for i := 0; i < b.N; i++ {
		for _, a := range arrays {
			be.pool.each(len(a), 1<<15, func(worker, lo, hi int) { sums[worker] += sum64(a[lo:hi]) })
		}
	}
	b.ReportMetric(wbytes/(b.Elapsed().Seconds()/float64(b.N))/1e9, "wGB/s")
}

func sum64(a []uint64) uint64 {
	var s0, s1, s2, s3 uint64
	for i := 0; i+4 <= len(a); i += 4 {
		s0 += a[i]
		s1 += a[i+1]
		s2 += a[i+2]
		s3 += a[i+3]
	}
	return s0 + s1 + s2 + s3
}

// The E2B MLP matvec (decode), its 262144-row tied head, and the same MLP
// weight against a 64-token prompt chunk (prefill).
func BenchmarkLinearQ4Matvec(b *testing.B) { benchLinear(b, 1, 6144, 1536, 4, 64) }
func BenchmarkLinearQ4Head(b *testing.B)   { benchLinear(b, 1, 262144, 1536, 4, 64) }
func BenchmarkLinearQ4Matmul(b *testing.B) { benchLinear(b, 64, 6144, 1536, 4, 64) }
func BenchmarkLinearQ8Matvec(b *testing.B) { benchLinear(b, 1, 6144, 1536, 8, 64) }
func BenchmarkLinearQ8Matmul(b *testing.B) { benchLinear(b, 64, 6144, 1536, 8, 64) }
func BenchmarkLinearF32Matvec(b *testing.B) {
	benchLinear(b, 1, 6144, 1536, 0, 0)
}
func BenchmarkLinearF32Matmul(b *testing.B) { benchLinear(b, 64, 6144, 1536, 0, 0) }

// A tower-style batched MatMul: [16 heads, 256, 64] @ [16, 64, 256].
func BenchmarkMatMul(b *testing.B) {
	r := rand.New(rand.NewSource(2))
	fa, fb := randFloats(r, 16*256*64, 1), randFloats(r, 16*64*256, 1)
	eachMode(b, func(b *testing.B, be *Backend) {
		at := be.FromFloat32(fa, []int{16, 256, 64}, tensor.Float32)
		bt := be.FromFloat32(fb, []int{16, 64, 256}, tensor.Float32)
		for i := 0; i < b.N; i++ {
			be.MatMul(at, bt)
		}
		b.ReportMetric(2*16*256*64*256/(b.Elapsed().Seconds()/float64(b.N))/1e9, "GFLOP/s")
	})
}

// Causal prefill attention with E2B's sliding layers (8 query heads on one
// KV head of 256) at L = S = 64 and 512, and one decode step at S = 512.
func BenchmarkSDPA(b *testing.B) {
	r := rand.New(rand.NewSource(3))
	for _, c := range []struct{ L, S int }{{64, 64}, {512, 512}, {1, 512}} {
		q := randFloats(r, 8*c.L*256, 1)
		k, v := randFloats(r, c.S*256, 1), randFloats(r, c.S*256, 1)
		b.Run(fmt.Sprintf("L%d_S%d", c.L, c.S), func(b *testing.B) {
			eachMode(b, func(b *testing.B, be *Backend) {
				qt := be.FromFloat32(q, []int{1, 8, c.L, 256}, tensor.Float32)
				kt := be.FromFloat32(k, []int{1, 1, c.S, 256}, tensor.Float32)
				vt := be.FromFloat32(v, []int{1, 1, c.S, 256}, tensor.Float32)
				for i := 0; i < b.N; i++ {
					be.SDPA(qt, kt, vt, 1, tensor.Mask{Kind: tensor.MaskCausal})
				}
			})
		})
	}
}

// The 4-bit matvec inner loop alone on cache-resident rows (64 rows of
// 1536), per kernel set: the compute ceiling of the decode matvec.
func BenchmarkQ4dotKernel(b *testing.B) {
	r := rand.New(rand.NewSource(4))
	const n, K, gs = 64, 1536, 64
	w := make([]uint32, n*K/8)
	for i := range w {
		w[i] = r.Uint32()
	}
	s, bi := randFloats(r, n*K/gs, 0.1), randFloats(r, n*K/gs, 1)
	x := randFloats(r, K, 1)
	xp, xs, y := make([]float32, K), make([]float32, K/gs), make([]float32, n)
	groupSums(x, xs, gs)
	for _, ks := range kernelSets() {
		ks.prepQ4(x, xp)
		b.Run(ks.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				ks.q4dot(w, s, bi, xp, xs, y, gs)
			}
			b.ReportMetric(float64(n*K/2+8*n*K/gs)/(b.Elapsed().Seconds()/float64(b.N))/1e9, "wGB/s")
		})
	}
}

// BenchmarkLinearTower: a vision-tower MLP projection over a 280-token
// image's 2520 patches (bf16 weights in the checkpoint, dense here).
func BenchmarkLinearTower(b *testing.B) { benchLinear(b, 2520, 3072, 768, 0, 0) }

// The training step's frozen 4-bit matmuls over 256 positions, forward
// (y = x·Wᵀ) and input gradient (dx = dy·W): E2B's gate/up and down
// projections and a block of its tied head (the rows TargetLogProbs takes
// at a time), fast path only.
func BenchmarkTrainLinearQ4(b *testing.B) {
	for _, c := range []struct {
		name    string
		out, in int
	}{{"gate", 6144, 1536}, {"down", 1536, 6144}, {"head-block", 16384, 1536}} {
		for _, dir := range []string{"forward", "input-grad"} {
			b.Run(c.name+"/"+dir, func(b *testing.B) {
				r := rand.New(rand.NewSource(1))
				l := randLinear(r, 0, c.out, c.in, 4, 64, false)
				be := New(Options{})
				defer be.Close()
				x := be.FromFloat32(randFloats(r, 256*c.in, 1), []int{256, c.in}, tensor.Float32)
				dy := be.FromFloat32(randFloats(r, 256*c.out, 1), []int{256, c.out}, tensor.Float32)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if dir == "forward" {
						be.Linear(x, l)
					} else {
						be.LinearT(dy, l)
					}
				}
				b.ReportMetric(2*256*float64(c.out*c.in)/(b.Elapsed().Seconds()/float64(b.N))/1e9, "GFLOP/s")
			})
		}
	}
}
