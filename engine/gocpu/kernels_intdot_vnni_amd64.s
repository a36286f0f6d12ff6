//go:build !purego

#include "textflag.h"
#include "kernels_intdot_amd64.h"

// AVX-512 VNNI twin of the integer decode's AVX2 kernel
// (kernels_intdot_amd64.s), for the avx512vnni set: ymm registers, each
// lane's 8 products summed into int32 by two VPDPBUSD (4 unsigned nibbles
// times 4 signed inputs each) in place of VPMADDUBSW, VPADDW and
// VPMADDWD. The lane sums are the same exact integers and the float steps
// the same, so the bits are the AVX2 kernel's. 16-lane (zmm) lanes
// measured slower streaming from memory; this keeps the AVX2 kernel's
// ymm shape and loads and drops two of its eleven vector ops per half.

DATA i8masks<>+0(SB)/4, $0x0f0f0f0f
DATA i8masks<>+4(SB)/4, $0x00010001
GLOBL i8masks<>(SB), RODATA|NOPTR, $8

#include "kernels_amd64.h"

// I8HALF(w, xe, xo, dl, sc, acc): as the AVX2 kernel's, the lane sums by
// VPDPBUSD into a zeroed Y5.
#define I8HALF(w, xe, xo, dl, sc, acc) \
	VMOVDQU w(SI), Y0;           \
	VPAND Y8, Y0, Y1;            \
	VPSRLW $4, Y0, Y2;           \
	VPAND Y8, Y2, Y2;            \
	VPXOR Y5, Y5, Y5;            \
	VPDPBUSD xe(DX), Y1, Y5;     \
	VPDPBUSD xo(DX), Y2, Y5;     \
	VCVTDQ2PS Y5, Y1;            \
	VMULPS dl(BX), sc, Y3;       \
	VMULPS Y3, Y1, Y1;           \
	VADDPS Y1, acc, acc

// func q4dotI8VNNI(w *uint32, s, b *uint16, xq *int8, dl, xs, y *float32, n, steps, cps, gpb, tail, groups int, idx *int32, f32 int)
// Per row: steps scale loads of gpb scales (1, 2 or 4, loaded whole,
// widened when bfloat16, and spread over each half by its 8 entries of
// idx), each used for cps chunks; then, with tail, one chunk of 64 inputs
// (lanes 0..7); then the biases. Scales and biases are bfloat16, or
// float32 with f32 set.
TEXT ·q4dotI8VNNI(SB), NOSPLIT, $64-120
#include "kernels_intdot_body_amd64.h"
