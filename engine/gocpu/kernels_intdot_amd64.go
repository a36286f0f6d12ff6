//go:build !purego

package gocpu

import "unsafe"

// Wrappers of the integer decode's kernels (kernels_intdot_amd64.s, AVX2,
// and its VPDPBUSD twins) and quantizers (kernels_intquant_amd64.s,
// kernels_intquant_avx512_amd64.s): they check what the assembly reads and
// writes and pass it the scale steps (intdot.go).

// q4dotI8AVX2's s and b point at bfloat16 values, or at float32 ones with
// f32 set.
//
//go:noescape
func q4dotI8AVX2(w *uint32, s, b *uint16, xq *int8, dl, xs, y *float32, n, steps, cps, gpb, tail, groups int, idx *int32, f32 int)

// q4dotI8VNNI (AVX-512 VNNI, ymm) and q4dotI8AVXVNNI (VEX) are its twins
// summing the lanes with VPDPBUSD: the same bits.
//
//go:noescape
func q4dotI8VNNI(w *uint32, s, b *uint16, xq *int8, dl, xs, y *float32, n, steps, cps, gpb, tail, groups int, idx *int32, f32 int)

//go:noescape
func q4dotI8AVXVNNI(w *uint32, s, b *uint16, xq *int8, dl, xs, y *float32, n, steps, cps, gpb, tail, groups int, idx *int32, f32 int)

// i8kernel is the decode kernels' signature.
type i8kernel func(w *uint32, s, b *uint16, xq *int8, dl, xs, y *float32, n, steps, cps, gpb, tail, groups int, idx *int32, f32 int)

//go:noescape
func quantizeVec512(x *float32, xq *int8, dl, xs *float32, K, shift int)

//go:noescape
func quantizeVecAVX2(x *float32, xq *int8, dl, xs *float32, K, shift int)

func quantizeVec512w(x []float32, gs int, xq []int8, dl, xs []float32) {
	quantizeVecAsm(quantizeVec512, x, gs, xq, dl, xs)
}

func quantizeVecAVX2w(x []float32, gs int, xq []int8, dl, xs []float32) {
	quantizeVecAsm(quantizeVecAVX2, x, gs, xq, dl, xs)
}

// quantizeVecAsm checks what a quantizer kernel reads and writes.
func quantizeVecAsm(k func(x *float32, xq *int8, dl, xs *float32, K, shift int), x []float32, gs int, xq []int8, dl, xs []float32) {
	K := len(x)
	if K == 0 {
		return
	}
	if gs < 32 || gs&(gs-1) != 0 || K%64 != 0 || K%gs != 0 {
		panic("gocpu: integer decode layout")
	}
	shift := 0
	for 32<<shift < gs {
		shift++
	}
	_, _, _ = xq[K-1], dl[K/8-1], xs[K/gs-1]
	k(&x[0], &xq[0], &dl[0], &xs[0], K, shift)
}

// i8spread[log2 gpb][i] is lane i's scale among a step's gpb: i·gpb/16.
var i8spread = [3][16]int32{
	{},
	{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1},
	{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3},
}

func q4dotI8AVX2w(w []uint32, s, b []uint16, xq []int8, dl, xs, y []float32, gs int) {
	q4dotI8Asm(q4dotI8AVX2, w, s, b, xq, dl, xs, y, gs)
}

func q4dotI8FAVX2w(w []uint32, s, b []float32, xq []int8, dl, xs, y []float32, gs int) {
	q4dotI8Asm(q4dotI8AVX2, w, s, b, xq, dl, xs, y, gs)
}

func q4dotI8VNNIw(w []uint32, s, b []uint16, xq []int8, dl, xs, y []float32, gs int) {
	q4dotI8Asm(q4dotI8VNNI, w, s, b, xq, dl, xs, y, gs)
}

func q4dotI8FVNNIw(w []uint32, s, b []float32, xq []int8, dl, xs, y []float32, gs int) {
	q4dotI8Asm(q4dotI8VNNI, w, s, b, xq, dl, xs, y, gs)
}

func q4dotI8AVXVNNIw(w []uint32, s, b []uint16, xq []int8, dl, xs, y []float32, gs int) {
	q4dotI8Asm(q4dotI8AVXVNNI, w, s, b, xq, dl, xs, y, gs)
}

func q4dotI8FAVXVNNIw(w []uint32, s, b []float32, xq []int8, dl, xs, y []float32, gs int) {
	q4dotI8Asm(q4dotI8AVXVNNI, w, s, b, xq, dl, xs, y, gs)
}

func q4dotI8Asm[S uint16 | float32](k i8kernel, w []uint32, s, b []S, xq []int8, dl, xs, y []float32, gs int) {
	n, K := len(y), len(xq)
	if n == 0 || K == 0 {
		clear(y)
		return
	}
	if gs < 32 || gs&(gs-1) != 0 || K%64 != 0 || K%gs != 0 {
		panic("gocpu: integer decode layout")
	}
	groups := K / gs
	_, _, _, _, _ = w[n*K/8-1], s[n*groups-1], b[n*groups-1], dl[K/8-1], xs[groups-1]
	steps, cps, gpb, lg := K/128, 1, 128/gs, 0
	if gs > 128 {
		steps, cps, gpb = K/gs, gs/128, 1
	}
	for 1<<lg < gpb {
		lg++
	}
	f32 := 0
	if unsafe.Sizeof(s[0]) == 4 {
		f32 = 1
	}
	k(&w[0], (*uint16)(unsafe.Pointer(&s[0])), (*uint16)(unsafe.Pointer(&b[0])), &xq[0], &dl[0], &xs[0], &y[0],
		n, steps, cps, gpb, K%128/64, groups, &i8spread[lg][0], f32)
}
