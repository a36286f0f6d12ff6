//go:build !purego

#include "textflag.h"

// 8×8 dword transposes by AVX2 (declarations and use:
// kernels_panel_amd64.go). The integer prefill's panel: 16 rows of packed
// words, row c at src+c·stride bytes, moved so that dst[16j+c] is row c's
// word j. Per step of 8 words each half of the panel (rows 0-7, then
// 8-15) is one 8×8 transpose of dwords: unpack pairs, unpack quads, swap
// 128-bit lanes.

// T8(base, r4): the 8 words at rows base + 0-3 strides (BX, R9 = 3·BX)
// and r4 + the same, transposed into Y8-Y15: Y8+j holds word j of the
// eight rows.
#define T8(base, r4) \
	VMOVDQU (base), Y0; \
	VMOVDQU (base)(BX*1), Y1; \
	VMOVDQU (base)(BX*2), Y2; \
	VMOVDQU (base)(R9*1), Y3; \
	VMOVDQU (r4), Y4; \
	VMOVDQU (r4)(BX*1), Y5; \
	VMOVDQU (r4)(BX*2), Y6; \
	VMOVDQU (r4)(R9*1), Y7; \
	VPUNPCKLDQ Y1, Y0, Y8; \
	VPUNPCKHDQ Y1, Y0, Y9; \
	VPUNPCKLDQ Y3, Y2, Y10; \
	VPUNPCKHDQ Y3, Y2, Y11; \
	VPUNPCKLDQ Y5, Y4, Y12; \
	VPUNPCKHDQ Y5, Y4, Y13; \
	VPUNPCKLDQ Y7, Y6, Y14; \
	VPUNPCKHDQ Y7, Y6, Y15; \
	VPUNPCKLQDQ Y10, Y8, Y0; \
	VPUNPCKHQDQ Y10, Y8, Y1; \
	VPUNPCKLQDQ Y11, Y9, Y2; \
	VPUNPCKHQDQ Y11, Y9, Y3; \
	VPUNPCKLQDQ Y14, Y12, Y4; \
	VPUNPCKHQDQ Y14, Y12, Y5; \
	VPUNPCKLQDQ Y15, Y13, Y6; \
	VPUNPCKHQDQ Y15, Y13, Y7; \
	VPERM2I128 $0x20, Y4, Y0, Y8; \
	VPERM2I128 $0x31, Y4, Y0, Y12; \
	VPERM2I128 $0x20, Y5, Y1, Y9; \
	VPERM2I128 $0x31, Y5, Y1, Y13; \
	VPERM2I128 $0x20, Y6, Y2, Y10; \
	VPERM2I128 $0x31, Y6, Y2, Y14; \
	VPERM2I128 $0x20, Y7, Y3, Y11; \
	VPERM2I128 $0x31, Y7, Y3, Y15

// STORE8(o): words 0-7 (Y8-Y15) to o+64j(DI).
#define STORE8(o) \
	VMOVDQU Y8, o+0(DI); \
	VMOVDQU Y9, o+64(DI); \
	VMOVDQU Y10, o+128(DI); \
	VMOVDQU Y11, o+192(DI); \
	VMOVDQU Y12, o+256(DI); \
	VMOVDQU Y13, o+320(DI); \
	VMOVDQU Y14, o+384(DI); \
	VMOVDQU Y15, o+448(DI)

// func panel16x8(dst, src *uint32, stride, steps int)
// stride in bytes; steps of 8 words (dst: 512 bytes per step).
TEXT ·panel16x8(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ stride+16(FP), BX
	MOVQ steps+24(FP), CX
	LEAQ (BX)(BX*2), R9 // 3·stride
	LEAQ (SI)(BX*4), R10 // row 4
	LEAQ (R10)(BX*4), R11 // row 8
	LEAQ (R11)(BX*4), R12 // row 12

step:
	T8(SI, R10)
	STORE8(0)
	T8(R11, R12)
	STORE8(32)
	ADDQ $32, SI
	ADDQ $32, R10
	ADDQ $32, R11
	ADDQ $32, R12
	ADDQ $512, DI
	DECQ CX
	JNZ  step
	VZEROUPPER
	RET

// func t8x8(src *float32, ls int, dst *float32, ld int)
// The 8×8 square at src (row stride ls bytes) transposed at dst (row
// stride ld bytes): T8, then its 8 rows stored ld apart.
TEXT ·t8x8(SB), NOSPLIT, $0-32
	MOVQ src+0(FP), SI
	MOVQ ls+8(FP), BX
	MOVQ dst+16(FP), DI
	MOVQ ld+24(FP), DX
	LEAQ (BX)(BX*2), R9
	LEAQ (SI)(BX*4), R10
	T8(SI, R10)
	LEAQ (DX)(DX*2), R11
	VMOVDQU Y8, (DI)
	VMOVDQU Y9, (DI)(DX*1)
	VMOVDQU Y10, (DI)(DX*2)
	VMOVDQU Y11, (DI)(R11*1)
	LEAQ (DI)(DX*4), DI
	VMOVDQU Y12, (DI)
	VMOVDQU Y13, (DI)(DX*1)
	VMOVDQU Y14, (DI)(DX*2)
	VMOVDQU Y15, (DI)(R11*1)
	VZEROUPPER
	RET
