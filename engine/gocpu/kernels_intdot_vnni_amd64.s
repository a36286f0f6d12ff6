//go:build !purego

#include "textflag.h"
#include "kernels_intdot_amd64.h"

// AVX-512 VNNI kernel of the integer decode (lanes and sums: intdot.go;
// declaration: kernels_intdot_amd64.go). Per chunk of 128 inputs the 64
// weight bytes are split into low and high nibbles and each summed against
// the even and odd int8 inputs by VPDPBUSD; the 16 int32 lanes are scaled
// by s·dl and added to Z15 with separate multiplies and adds.

#include "kernels_amd64.h"

DATA i8nib<>+0(SB)/4, $0x0f0f0f0f
GLOBL i8nib<>(SB), RODATA|NOPTR, $4

// func q4dotI8VNNI(w *uint32, s, b *uint16, xq *int8, dl, xs, y *float32, n, steps, cps, gpb, tail, groups int, idx *int32, f32 int)
// steps scale loads of gpb scales (mask K1), each spread over the 16 lanes
// by idx and used for cps chunks; then, with tail, one chunk of 64 inputs
// (gpb/2 scales, mask K3; lanes 0..7). Scales and biases are bfloat16, or
// float32 with f32 set.
TEXT ·q4dotI8VNNI(SB), NOSPLIT, $0-120
	I8DOTARGS
	VMOVDQU32 (AX), Z21
	VPBROADCASTD i8nib<>+0(SB), Z8
	MOVQ gpb+80(FP), CX
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	KMOVW AX, K1
	SHRQ $1, CX
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	KMOVW AX, K3
	MOVL $0xff, AX
	KMOVW AX, K4
	MOVQ groups+96(FP), CX
	ANDQ $15, CX
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	KMOVW AX, K2
	MOVQ n+56(FP), CX
	TESTQ CX, CX
	JZ   done

row:
	VPXORD Z15, Z15, Z15
	MOVQ R10, DX
	MOVQ R11, BX
	MOVQ steps+64(FP), R13
	TESTQ R13, R13
	JZ   tail

step:
	MOVQ gpb+80(FP), AX
	CMPQ f32+112(FP), $0
	JNE  stepf
	VMOVDQU16.Z (R8), K1, X4
	VPMOVZXWD Y4, Z4
	VPSLLD $16, Z4, Z4
	LEAQ (R8)(AX*2), R8
	JMP  spread

stepf:
	VMOVUPS.Z (R8), K1, X4
	LEAQ (R8)(AX*4), R8

spread:
	VPERMPS Z4, Z21, Z22
	MOVQ R14, AX

chunk:
	PREFETCHT0 4096(SI)
	VMOVDQU64 (SI), Z0
	VPANDD Z8, Z0, Z1
	VPSRLW $4, Z0, Z2
	VPANDD Z8, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPDPBUSD (DX), Z1, Z3
	VPDPBUSD 64(DX), Z2, Z3
	VCVTDQ2PS Z3, Z3
	VMULPS (BX), Z22, Z5
	VMULPS Z5, Z3, Z3
	VADDPS Z3, Z15, Z15
	ADDQ $64, SI
	ADDQ $128, DX
	ADDQ $64, BX
	DECQ AX
	JNZ  chunk
	DECQ R13
	JNZ  step

tail:
	MOVQ tail+88(FP), AX
	TESTQ AX, AX
	JZ   bias
	MOVQ gpb+80(FP), AX
	CMPQ f32+112(FP), $0
	JNE  tailf
	VMOVDQU16.Z (R8), K3, X4
	VPMOVZXWD Y4, Z4
	VPSLLD $16, Z4, Z4
	ADDQ AX, R8
	JMP  tailspread

tailf:
	VMOVUPS.Z (R8), K3, X4
	LEAQ (R8)(AX*2), R8

tailspread:
	VPERMPS Z4, Z21, Z22
	VMOVDQU (SI), Y0 // VEX: lanes 8-15 of Z0 cleared
	VPANDD Z8, Z0, Z1
	VPSRLW $4, Z0, Z2
	VPANDD Z8, Z2, Z2
	VMOVDQU (DX), Y6
	VMOVDQU 32(DX), Y7
	VPXORD Z3, Z3, Z3
	VPDPBUSD Z6, Z1, Z3
	VPDPBUSD Z7, Z2, Z3
	VCVTDQ2PS Z3, Z3
	VMOVUPS.Z (BX), K4, Z5
	VMULPS Z5, Z22, Z5
	VMULPS Z5, Z3, Z3
	VADDPS Z3, Z15, Z15
	ADDQ $32, SI

bias:
	MOVQ R12, DX
	MOVQ groups+96(FP), R13
	CMPQ f32+112(FP), $0
	JNE  biasf

bias16:
	CMPQ R13, $16
	JLT  biasrem
	VPMOVZXWD (R9), Z1
	VPSLLD $16, Z1, Z1
	VMULPS (DX), Z1, Z1
	VADDPS Z1, Z15, Z15
	ADDQ $32, R9
	ADDQ $64, DX
	SUBQ $16, R13
	JMP  bias16

biasrem:
	VMOVDQU16.Z (R9), K2, Y1
	VPMOVZXWD Y1, Z1
	VPSLLD $16, Z1, Z1
	VMOVUPS.Z (DX), K2, Z2
	VMULPS Z2, Z1, Z1
	VADDPS Z1, Z15, Z15
	LEAQ (R9)(R13*2), R9
	JMP  sum

biasf:
	CMPQ R13, $16
	JLT  biasfrem
	VMOVUPS (R9), Z1
	VMULPS (DX), Z1, Z1
	VADDPS Z1, Z15, Z15
	ADDQ $64, R9
	ADDQ $64, DX
	SUBQ $16, R13
	JMP  biasf

biasfrem:
	VMOVUPS.Z (R9), K2, Z1
	VMOVUPS.Z (DX), K2, Z2
	VMULPS Z2, Z1, Z1
	VADDPS Z1, Z15, Z15
	LEAQ (R9)(R13*4), R9

sum:
	HSUM512
	DECQ CX
	JNZ  row

done:
	VZEROUPPER
	RET
