//go:build !purego

#include "textflag.h"
#include "kernels_intdot_amd64.h"

// AVX-VNNI twin of the integer decode's AVX2 kernel
// (kernels_intdot_amd64.s), for the avxvnni set (AVX-VNNI without
// AVX-512: Alder Lake and later Intel cores): the AVX-512 VNNI twin's
// steps (kernels_intdot_vnni_amd64.s) with the VEX VPDPBUSD, register
// operands only, so the same bits.
//
// Go's assembler writes VPDPBUSD only as EVEX; the two VEX forms are
// BYTEs (as kernels_int_avxvnni_amd64.s explains): VEX.256.66.0F38.W0
// 50 /r with dst ymm5 in reg, the weights in vvvv (ymm1: 75, ymm2: 6D)
// and the inputs in rm (ymm3: EB, ymm6: EE).

DATA i8masks<>+0(SB)/4, $0x0f0f0f0f
DATA i8masks<>+4(SB)/4, $0x00010001
GLOBL i8masks<>(SB), RODATA|NOPTR, $8

#include "kernels_amd64.h"

// I8HALF(w, xe, xo, dl, sc, acc): as the AVX2 kernel's, the lane sums by
// VPDPBUSD into a zeroed Y5 (inputs loaded into Y3 and Y6 first).
#define I8HALF(w, xe, xo, dl, sc, acc) \
	VMOVDQU w(SI), Y0;           \
	VPAND Y8, Y0, Y1;            \
	VPSRLW $4, Y0, Y2;           \
	VPAND Y8, Y2, Y2;            \
	VMOVDQU xe(DX), Y3;          \
	VMOVDQU xo(DX), Y6;          \
	VPXOR Y5, Y5, Y5;            \
	BYTE $0xC4; BYTE $0xE2; BYTE $0x75; BYTE $0x50; BYTE $0xEB /* {vex} vpdpbusd ymm5, ymm1, ymm3 */; \
	BYTE $0xC4; BYTE $0xE2; BYTE $0x6D; BYTE $0x50; BYTE $0xEE /* {vex} vpdpbusd ymm5, ymm2, ymm6 */; \
	VCVTDQ2PS Y5, Y1;            \
	VMULPS dl(BX), sc, Y3;       \
	VMULPS Y3, Y1, Y1;           \
	VADDPS Y1, acc, acc

// func q4dotI8AVXVNNI(w *uint32, s, b *uint16, xq *int8, dl, xs, y *float32, n, steps, cps, gpb, tail, groups int, idx *int32, f32 int)
// Per row: steps scale loads of gpb scales (1, 2 or 4, loaded whole,
// widened when bfloat16, and spread over each half by its 8 entries of
// idx), each used for cps chunks; then, with tail, one chunk of 64 inputs
// (lanes 0..7); then the biases. Scales and biases are bfloat16, or
// float32 with f32 set.
TEXT ·q4dotI8AVXVNNI(SB), NOSPLIT, $64-120
#include "kernels_intdot_body_amd64.h"
