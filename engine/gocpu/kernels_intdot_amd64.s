//go:build !purego

#include "textflag.h"
#include "kernels_intdot_amd64.h"

// AVX2 kernel of the integer decode (lanes and sums: intdot.go;
// declaration: kernels_intdot_amd64.go): the 16 lanes of a chunk as two
// halves of 8, lanes 0..7 in Y14 and 8..15 in Y15, each lane's 8 products
// summed by VPMADDUBSW (int16 pairs, |·| ≤ 2·15·127, never saturating),
// VPADDW and VPMADDWD; then intdot.go's float32 steps, so the portable
// kernel's bits. Every amd64 set decodes with it (AVX-512 included: a
// decode step streams its weights from memory, where a 16-lane VPDPBUSD
// kernel measured slower).

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
	I8DOTARGS
	VMOVDQU (AX), Y12
	VMOVDQU 32(AX), Y13
	VPBROADCASTD i8masks<>+0(SB), Y8
	VPBROADCASTD i8masks<>+4(SB), Y9
	MOVQ n+56(FP), CX
	TESTQ CX, CX
	JZ   done

row:
	VXORPS Y14, Y14, Y14
	VXORPS Y15, Y15, Y15
	MOVQ R10, DX
	MOVQ R11, BX
	MOVQ steps+64(FP), R13
	TESTQ R13, R13
	JZ   tail

step:
	CMPQ f32+112(FP), $0
	JNE  stepf
	MOVQ gpb+80(FP), AX
	CMPQ AX, $2
	JEQ  load2
	JGT  load4
	MOVWLZX (R8), AX
	VMOVD AX, X4
	ADDQ $2, R8
	JMP  spread

load2:
	VMOVD (R8), X4
	ADDQ $4, R8
	JMP  spread

load4:
	VMOVQ (R8), X4
	ADDQ $8, R8

spread:
	VPMOVZXWD X4, Y4
	VPSLLD $16, Y4, Y4

spreadf:
	VPERMD Y4, Y12, Y10
	VPERMD Y4, Y13, Y11
	MOVQ R14, AX

chunk:
	PREFETCHT0 4096(SI)
	I8HALF(0, 0, 64, 0, Y10, Y14)
	I8HALF(32, 32, 96, 32, Y11, Y15)
	ADDQ $64, SI
	ADDQ $128, DX
	ADDQ $64, BX
	DECQ AX
	JNZ  chunk
	DECQ R13
	JNZ  step
	JMP  tail

stepf:
	MOVQ gpb+80(FP), AX
	CMPQ AX, $2
	JEQ  loadf2
	JGT  loadf4
	VMOVSS (R8), X4
	ADDQ $4, R8
	JMP  spreadf

loadf2:
	VMOVQ (R8), X4
	ADDQ $8, R8
	JMP  spreadf

loadf4:
	VMOVUPS (R8), X4
	ADDQ $16, R8
	JMP  spreadf

tail:
	MOVQ tail+88(FP), AX
	TESTQ AX, AX
	JZ   bias
	CMPQ f32+112(FP), $0
	JNE  tailf
	MOVQ gpb+80(FP), AX
	CMPQ AX, $4
	JEQ  tail2
	MOVWLZX (R8), AX
	VMOVD AX, X4
	ADDQ $2, R8
	JMP  tailspread

tail2:
	VMOVD (R8), X4
	ADDQ $4, R8

tailspread:
	VPMOVZXWD X4, Y4
	VPSLLD $16, Y4, Y4

tailspreadf:
	VPERMD Y4, Y12, Y10
	I8HALF(0, 0, 32, 0, Y10, Y14)
	ADDQ $32, SI
	JMP  bias

tailf:
	MOVQ gpb+80(FP), AX
	CMPQ AX, $4
	JEQ  tailf2
	VMOVSS (R8), X4
	ADDQ $4, R8
	JMP  tailspreadf

tailf2:
	VMOVQ (R8), X4
	ADDQ $8, R8
	JMP  tailspreadf

bias:
	MOVQ R12, DX
	MOVQ groups+96(FP), R13
	CMPQ f32+112(FP), $0
	JNE  biasf

bias16:
	CMPQ R13, $16
	JLT  biasrem
	VPMOVZXWD (R9), Y1
	VPSLLD $16, Y1, Y1
	VMULPS (DX), Y1, Y1
	VADDPS Y1, Y14, Y14
	VPMOVZXWD 16(R9), Y1
	VPSLLD $16, Y1, Y1
	VMULPS 32(DX), Y1, Y1
	VADDPS Y1, Y15, Y15
	ADDQ $32, R9
	ADDQ $64, DX
	SUBQ $16, R13
	JMP  bias16

biasf:
	CMPQ R13, $16
	JLT  biasrem
	VMOVUPS (R9), Y1
	VMULPS (DX), Y1, Y1
	VADDPS Y1, Y14, Y14
	VMOVUPS 32(R9), Y1
	VMULPS 32(DX), Y1, Y1
	VADDPS Y1, Y15, Y15
	ADDQ $64, R9
	ADDQ $64, DX
	SUBQ $16, R13
	JMP  biasf

biasrem:
	// the last groups%16 terms into lanes 0.. of a zeroed 16-float frame
	VXORPS Y1, Y1, Y1
	VMOVUPS Y1, 0(SP)
	VMOVUPS Y1, 32(SP)
	XORQ BX, BX

biasone:
	CMPQ BX, R13
	JEQ  biassum
	CMPQ f32+112(FP), $0
	JNE  biasonef
	MOVWLZX (R9), AX
	SHLL $16, AX
	VMOVD AX, X1
	ADDQ $2, R9
	JMP  biasmul

biasonef:
	VMOVSS (R9), X1
	ADDQ $4, R9

biasmul:
	VMULSS (DX), X1, X1
	VMOVSS X1, 0(SP)(BX*4)
	ADDQ $4, DX
	INCQ BX
	JMP  biasone

biassum:
	VADDPS 0(SP), Y14, Y14
	VADDPS 32(SP), Y15, Y15
	VADDPS Y14, Y15, Y15 // lanes 8..15 plus 0..7: hsum16's first step
	HSUM15
	VMOVSS X0, (DI)
	ADDQ $4, DI
	DECQ CX
	JNZ  row

done:
	VZEROUPPER
	RET
