//go:build !purego

#include "textflag.h"
#include "kernels_intdot_amd64.h"

// AVX2 kernel of the integer decode (lanes and sums: intdot.go;
// declaration: kernels_intdot_amd64.go): the 16 lanes of a chunk as two
// halves of 8, lanes 0..7 in Y14 and 8..15 in Y15, each lane's 8 products
// summed by VPMADDUBSW (int16 pairs, |·| ≤ 2·15·127, never saturating),
// VPADDW and VPMADDWD; then intdot.go's float32 steps, so the portable
// kernel's bits. The avx2 and avx512 sets decode with it; the VNNI sets
// with its twins (kernels_intdot_vnni_amd64.s,
// kernels_intdot_avxvnni_amd64.s), which sum the lanes with VPDPBUSD. The
// body they share: kernels_intdot_body_amd64.h.

DATA i8masks<>+0(SB)/4, $0x0f0f0f0f
DATA i8masks<>+4(SB)/4, $0x00010001
GLOBL i8masks<>(SB), RODATA|NOPTR, $8

#include "kernels_amd64.h"

// I8HALF(w, xe, xo, dl, sc, acc): 32 weight bytes at w(SI) against the
// even inputs at xe(DX) and the odd ones at xo(DX); lanes scaled by sc·dl
// (dl at dl(BX)) and added to acc.
#define I8HALF(w, xe, xo, dl, sc, acc) \
	VMOVDQU w(SI), Y0;           \
	VPAND Y8, Y0, Y1;            \
	VPSRLW $4, Y0, Y2;           \
	VPAND Y8, Y2, Y2;            \
	VPMADDUBSW xe(DX), Y1, Y1;   \
	VPMADDUBSW xo(DX), Y2, Y2;   \
	VPADDW Y2, Y1, Y1;           \
	VPMADDWD Y9, Y1, Y1;         \
	VCVTDQ2PS Y1, Y1;            \
	VMULPS dl(BX), sc, Y3;       \
	VMULPS Y3, Y1, Y1;           \
	VADDPS Y1, acc, acc

// func q4dotI8AVX2(w *uint32, s, b *uint16, xq *int8, dl, xs, y *float32, n, steps, cps, gpb, tail, groups int, idx *int32, f32 int)
// Per row: steps scale loads of gpb scales (1, 2 or 4, loaded whole,
// widened when bfloat16, and spread over each half by its 8 entries of
// idx), each used for cps chunks; then, with tail, one chunk of 64 inputs
// (lanes 0..7); then the biases. Scales and biases are bfloat16, or
// float32 with f32 set.
TEXT ·q4dotI8AVX2(SB), NOSPLIT, $64-120
#include "kernels_intdot_body_amd64.h"
