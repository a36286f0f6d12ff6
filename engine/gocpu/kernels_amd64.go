//go:build !purego

package gocpu

import "golang.org/x/sys/cpu"

// AVX2/FMA versions of the inner loops (kernels_{matvec,gemm,exp,tanh}_amd64.s).
// The wrappers check the slice bounds the assembly relies on; layouts are
// documented on kernelSet.

func init() {
	if sets := archKernelSets(); len(sets) > 0 {
		kern = sets[len(sets)-1]
	}
}

// archKernelSets are the assembly sets this CPU runs, fastest last.
func archKernelSets() []kernelSet {
	var sets []kernelSet
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		sets = append(sets, avx2Kernels)
		if cpu.X86.HasAVXVNNI {
			sets = append(sets, avxVNNIKernels)
		}
		if hasAVX512() {
			sets = append(sets, avx512Kernels)
			if cpu.X86.HasAVX512VNNI {
				sets = append(sets, avx512VNNIKernels)
			}
		}
	}
	return sets
}

// hasAVX512: the AVX-512 set uses F, and BW/VL for its masked 2-byte loads
// (every AVX-512 CPU since Skylake-SP and Zen 4 has all three).
func hasAVX512() bool { return cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VL }

// missingKernelSets names the assembly sets of this architecture that this
// CPU (or GODEBUG=cpu.…=off) leaves out, each with why, so that tests can
// say what they did not run.
func missingKernelSets() map[string]string {
	m := map[string]string{}
	if !cpu.X86.HasAVX2 || !cpu.X86.HasFMA {
		m["avx2"] = "this CPU lacks AVX2/FMA (or GODEBUG turned them off)"
	}
	if !cpu.X86.HasAVX2 || !cpu.X86.HasFMA || !cpu.X86.HasAVXVNNI {
		m["avxvnni"] = "this CPU lacks AVX2/FMA with AVX-VNNI, the VEX VPDPBUSD (or GODEBUG turned them off)"
	}
	if !hasAVX512() {
		m["avx512"] = "this CPU lacks AVX-512 F/BW/VL (or GODEBUG turned them off)"
	}
	if !hasAVX512() || !cpu.X86.HasAVX512VNNI {
		m["avx512vnni"] = "this CPU lacks AVX-512 F/BW/VL with VNNI (or GODEBUG turned them off)"
	}
	return m
}

var avx2Kernels = kernelSet{name: "avx2", nr: 16, prepQ4: prepQ4x8, q4dot: q4dotAVX2, q8dot: q8dotAVX2,
	q4dotH: q4dotHAVX2, q8dotH: q8dotHAVX2, deq4: deq4AVX2,
	deq8: deq8AVX2, gemm: gemmAVX2, dot: dotAVX2, exp: expAVX2,
	dotBF16: dotBF16AVX2, dotF16: dotF16AVX2, sum64: sum64AVX2, tanh: tanhAVX2, widenBF16: widenBF16AVX2, widenF16: widenF16AVX2, q4i8: q4i8AVX2, quant8: quant8AVX2,
	q4dotI8: q4dotI8AVX2w, q4dotI8F: q4dotI8FAVX2w, quantVec: quantizeVecAVX2w}

//go:noescape
func q4dotG64(w *uint32, s, b, xp, xs, y *float32, n, groups, bpg int)

//go:noescape
func q4dotG32(w *uint32, s, b, xp, xs, y *float32, n, groups int)

//go:noescape
func q8dot(w *uint32, s, b, x, xs, y *float32, n, groups, bpg int)

//go:noescape
func deq4(w *uint32, s, b, out *float32, nblk, gshift int)

//go:noescape
func deq8(w *uint32, s, b, out *float32, groups, cpg int)

//go:noescape
func gemm6x16(a *[6]*float32, b *float32, ldb, k int, c *float32)

//go:noescape
func gemm6x8(a *[6]*float32, b *float32, ldb, k int, c *float32)

//go:noescape
func dotRows(w, x, y *float32, n, k int)

//go:noescape
func exp4(v *float32, n int, m float32)

// qlayout checks what a 4- or 8-bit matvec kernel reads (K·bits/32 words,
// K/gs scales and biases per row of y, K/gs group sums) and returns the rows,
// inputs and groups per row; n = 0 (y cleared) when there is nothing to do.
// Every set's quantized matvec wrappers, float32 or bfloat16 scales, share it.
func qlayout[S float32 | uint16](w []uint32, s, b []S, x, xs, y []float32, gs, bits int) (n, K, groups int) {
	n, K = len(y), len(x)
	if n == 0 || K == 0 {
		clear(y)
		return 0, 0, 0
	}
	if gs < 32 || K%gs != 0 || bits == 4 && (K%64 != 0 || gs&(gs-1) != 0) || bits == 8 && gs%32 != 0 {
		panic("gocpu: quantized matvec layout")
	}
	groups = K / gs
	_, _, _, _ = w[n*K/(32/bits)-1], s[n*groups-1], b[n*groups-1], xs[groups-1]
	return n, K, groups
}

func q4dotAVX2(w []uint32, s, b, xp, xs, y []float32, gs int) {
	switch n, _, groups := qlayout(w, s, b, xp, xs, y, gs, 4); {
	case n == 0:
	case gs == 32:
		q4dotG32(&w[0], &s[0], &b[0], &xp[0], &xs[0], &y[0], n, groups)
	default:
		q4dotG64(&w[0], &s[0], &b[0], &xp[0], &xs[0], &y[0], n, groups, gs/64)
	}
}

func q8dotAVX2(w []uint32, s, b, x, xs, y []float32, gs int) {
	if n, _, groups := qlayout(w, s, b, x, xs, y, gs, 8); n > 0 {
		q8dot(&w[0], &s[0], &b[0], &x[0], &xs[0], &y[0], n, groups, gs/32)
	}
}

func deq4AVX2(w []uint32, s, b, out []float32, gs int) {
	K := len(out)
	if K == 0 {
		return
	}
	if K%64 != 0 || gs < 32 || gs&(gs-1) != 0 {
		panic("gocpu: deq4 layout")
	}
	gshift := 0
	for 32<<gshift < gs {
		gshift++
	}
	groups := (K + gs - 1) / gs
	_, _, _ = w[K/8-1], s[groups-1], b[groups-1]
	deq4(&w[0], &s[0], &b[0], &out[0], K/64, gshift)
}

func deq8AVX2(w []uint32, s, b, out []float32, gs int) {
	K := len(out)
	if K == 0 {
		return
	}
	if gs%8 != 0 || K%gs != 0 {
		panic("gocpu: deq8 layout")
	}
	_, _, _ = w[K/4-1], s[K/gs-1], b[K/gs-1]
	deq8(&w[0], &s[0], &b[0], &out[0], K/gs, gs/8)
}

// rowStarts is the first element of each of the six A rows, each checked
// to hold k values (k > 0).
func rowStarts(a *[6][]float32, k int) [6]*float32 {
	var p [6]*float32
	for i := range a {
		p[i] = &a[i][:k][0]
	}
	return p
}

func gemmAVX2(a *[6][]float32, b []float32, ldb, k, cols int, c *gemmOut) {
	if k == 0 {
		*c = gemmOut{}
		return
	}
	p := rowStarts(a, k)
	if cols > 8 {
		_ = b[(k-1)*ldb+15]
		gemm6x16(&p, &b[0], 4*ldb, k, &c[0])
	} else {
		_ = b[(k-1)*ldb+7]
		gemm6x8(&p, &b[0], 4*ldb, k, &c[0])
	}
}

func dotAVX2(w, x, y []float32) {
	n, k := len(y), len(x)
	if n == 0 {
		return
	}
	if k == 0 {
		clear(y)
		return
	}
	_ = w[n*k-1]
	dotRows(&w[0], &x[0], &y[0], n, k)
}

func expAVX2(v []float32, m float32) {
	n := len(v) &^ 3
	if n > 0 {
		exp4(&v[0], n, m)
	}
	expGo(v[n:], m)
}

//go:noescape
func tanh8(v *float32, n int)

func tanhAVX2(v []float32) {
	n := len(v) &^ 7
	if n > 0 {
		tanh8(&v[0], n)
	}
	tanhGo(v[n:])
}
