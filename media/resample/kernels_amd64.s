//go:build !purego

#include "textflag.h"

// AVX2 forms of the resize passes (declarations: kernels_amd64.go). Sums are
// int32 as in the Go versions; half = 1<<21 rounds, >>22 drops the 22-bit
// coefficient scale, and the signed/unsigned packs clamp to 0..255.

DATA rsconst<>+0(SB)/4, $0x200000 // half
DATA rsconst<>+4(SB)/4, $0
DATA rsconst<>+8(SB)/4, $4        // vconv32's byte-group order
DATA rsconst<>+12(SB)/4, $1
DATA rsconst<>+16(SB)/4, $5
DATA rsconst<>+20(SB)/4, $2
DATA rsconst<>+24(SB)/4, $6
DATA rsconst<>+28(SB)/4, $3
DATA rsconst<>+32(SB)/4, $7
GLOBL rsconst<>(SB), RODATA|NOPTR, $36

// One output's taps of one chunk: load 8 samples at P+SI, multiply by the
// output's 8 weights at K+OFF, accumulate into ACC.
#define TAP8(P, OFF, T, ACC) \
	VPMOVZXBD (P)(SI*1), T \
	VPMULLD OFF(R13), T, T \
	VPADDD T, ACC, ACC

// func hconv8(dst, src *uint8, xmin, k *int32, groups, chunks int)
// Eight outputs at a time: one accumulator each over the chunks, then a
// horizontal-add tree puts the eight sums in one register.
TEXT ·hconv8(SB), NOSPLIT, $0-48
	MOVQ k+24(FP), R13
	VPBROADCASTD rsconst<>+0(SB), Y15

hgroup:
	MOVQ src+8(FP), SI
	MOVQ xmin+16(FP), DI
	MOVLQSX 0(DI), AX
	MOVLQSX 4(DI), BX
	MOVLQSX 8(DI), CX
	MOVLQSX 12(DI), DX
	MOVLQSX 16(DI), R8
	MOVLQSX 20(DI), R9
	MOVLQSX 24(DI), R10
	MOVLQSX 28(DI), R11
	ADDQ SI, AX
	ADDQ SI, BX
	ADDQ SI, CX
	ADDQ SI, DX
	ADDQ SI, R8
	ADDQ SI, R9
	ADDQ SI, R10
	ADDQ SI, R11
	ADDQ $32, DI
	MOVQ DI, xmin+16(FP)
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7
	XORQ SI, SI
	MOVQ chunks+40(FP), R12

hchunk:
	TAP8(AX, 0, Y8, Y0)
	TAP8(BX, 32, Y9, Y1)
	TAP8(CX, 64, Y10, Y2)
	TAP8(DX, 96, Y11, Y3)
	TAP8(R8, 128, Y12, Y4)
	TAP8(R9, 160, Y13, Y5)
	TAP8(R10, 192, Y14, Y6)
	TAP8(R11, 224, Y8, Y7)
	ADDQ $8, SI
	ADDQ $256, R13
	DECQ R12
	JNZ hchunk

	// Y0..Y7 hold 8 partial sums each; reduce to [s0 .. s7].
	VPHADDD Y1, Y0, Y0
	VPHADDD Y3, Y2, Y2
	VPHADDD Y5, Y4, Y4
	VPHADDD Y7, Y6, Y6
	VPHADDD Y2, Y0, Y0
	VPHADDD Y6, Y4, Y4
	VPERM2I128 $0x20, Y4, Y0, Y1
	VPERM2I128 $0x31, Y4, Y0, Y2
	VPADDD Y2, Y1, Y1
	VPADDD Y15, Y1, Y1
	VPSRAD $22, Y1, Y1
	VEXTRACTI128 $1, Y1, X2
	VPACKSSDW X2, X1, X1
	VPACKUSWB X1, X1, X1
	MOVQ dst+0(FP), DI
	MOVQ X1, (DI)
	ADDQ $8, DI
	MOVQ DI, dst+0(FP)
	DECQ groups+32(FP)
	JNZ hgroup
	VZEROUPPER
	RET

// func vconv32(dst, src *uint8, stride int, k *int32, taps, n int)
// 32 outputs at a time, weights broadcast row by row.
TEXT ·vconv32(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ stride+16(FP), DX
	MOVQ n+40(FP), CX
	VPBROADCASTD rsconst<>+0(SB), Y15
	VMOVDQU rsconst<>+4(SB), Y14

vcol:
	VMOVDQA Y15, Y0
	VMOVDQA Y15, Y1
	VMOVDQA Y15, Y2
	VMOVDQA Y15, Y3
	MOVQ k+24(FP), BX
	MOVQ taps+32(FP), R8
	MOVQ SI, R9

vtap:
	VPBROADCASTD (BX), Y8
	VPMOVZXBD 0(R9), Y4
	VPMOVZXBD 8(R9), Y5
	VPMOVZXBD 16(R9), Y6
	VPMOVZXBD 24(R9), Y7
	VPMULLD Y8, Y4, Y4
	VPMULLD Y8, Y5, Y5
	VPMULLD Y8, Y6, Y6
	VPMULLD Y8, Y7, Y7
	VPADDD Y4, Y0, Y0
	VPADDD Y5, Y1, Y1
	VPADDD Y6, Y2, Y2
	VPADDD Y7, Y3, Y3
	ADDQ $4, BX
	ADDQ DX, R9
	DECQ R8
	JNZ vtap

	VPSRAD $22, Y0, Y0
	VPSRAD $22, Y1, Y1
	VPSRAD $22, Y2, Y2
	VPSRAD $22, Y3, Y3
	// Packs work per 128-bit lane; VPERMD restores the order of the 4-byte groups.
	VPACKSSDW Y1, Y0, Y0
	VPACKSSDW Y3, Y2, Y2
	VPACKUSWB Y2, Y0, Y0
	VPERMD Y0, Y14, Y0
	VMOVDQU Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $32, CX
	JNZ vcol
	VZEROUPPER
	RET
