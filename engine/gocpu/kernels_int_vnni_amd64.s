//go:build !purego

#include "textflag.h"
#include "kernels_int512_amd64.h"

// AVX-512 VNNI kernel of the integer prefill (layouts: intgemm.go;
// declaration: kernels_int_amd64.go): the 8×16 block of a tile of 8 int8
// input rows and a panel of 16 weight rows, one zmm lane per weight row.
// Per step of 8 inputs the panel's 16 packed words are loaded once and
// unpacked in registers (even inputs: masked; odd: shifted and masked);
// each row's 4 even and 4 odd int8 are broadcast from memory into
// VPDPBUSD (4 unsigned weight bytes times 4 signed input bytes into an
// int32 lane). Per block the exact sums are scaled by the row's d, per
// group by the weights' s, then the bias term is added (each a fused
// multiply-add): the AVX2 kernel's order, so its results bit for bit.
//
// Registers: Z0-Z7 acc per row, Z8-Z15 group sums, Z16-Z23 block integer
// sums, Z24 the nibble mask, Z25-Z27 the panel step, Z28 s or b.

DATA nibbles<>+0(SB)/4, $0x0f0f0f0f
GLOBL nibbles<>(SB), RODATA|NOPTR, $4

// ZSTEP(o): the step at o(SI) (panel) and o(BX) (tile), both 64 bytes.
#define ZSTEP(o) \
	VMOVDQU32 o(SI), Z25; \
	VPSRLW $4, Z25, Z27;  \
	VPANDD Z24, Z25, Z26; \
	VPANDD Z24, Z27, Z27; \
	VPDPBUSD.BCST o+0(BX), Z26, Z16; \
	VPDPBUSD.BCST o+4(BX), Z27, Z16; \
	VPDPBUSD.BCST o+8(BX), Z26, Z17; \
	VPDPBUSD.BCST o+12(BX), Z27, Z17; \
	VPDPBUSD.BCST o+16(BX), Z26, Z18; \
	VPDPBUSD.BCST o+20(BX), Z27, Z18; \
	VPDPBUSD.BCST o+24(BX), Z26, Z19; \
	VPDPBUSD.BCST o+28(BX), Z27, Z19; \
	VPDPBUSD.BCST o+32(BX), Z26, Z20; \
	VPDPBUSD.BCST o+36(BX), Z27, Z20; \
	VPDPBUSD.BCST o+40(BX), Z26, Z21; \
	VPDPBUSD.BCST o+44(BX), Z27, Z21; \
	VPDPBUSD.BCST o+48(BX), Z26, Z22; \
	VPDPBUSD.BCST o+52(BX), Z27, Z22; \
	VPDPBUSD.BCST o+56(BX), Z26, Z23; \
	VPDPBUSD.BCST o+60(BX), Z27, Z23

// func q4i8x8vnni(p *uint32, s, b *float32, xq *int8, d, xs *float32, groups, bpg int, c *float32, ldc int)
// ldc in bytes.
TEXT ·q4i8x8vnni(SB), NOSPLIT, $0-80
	MOVQ p+0(FP), SI
	MOVQ s+8(FP), R8
	MOVQ b+16(FP), R9
	MOVQ xq+24(FP), BX
	MOVQ d+32(FP), DX
	MOVQ xs+40(FP), R10
	MOVQ groups+48(FP), CX
	MOVQ bpg+56(FP), R11
	MOVQ c+64(FP), DI
	MOVQ ldc+72(FP), R12
	VPBROADCASTD nibbles<>(SB), Z24
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	TESTQ CX, CX
	JZ   store

group:
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	MOVQ R11, AX

blk:
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23
	ZSTEP(0)
	ZSTEP(64)
	ZSTEP(128)
	ZSTEP(192)
	VCVTDQ2PS Z16, Z16
	VFMADD231PS.BCST 0(DX), Z16, Z8
	VCVTDQ2PS Z17, Z17
	VFMADD231PS.BCST 4(DX), Z17, Z9
	VCVTDQ2PS Z18, Z18
	VFMADD231PS.BCST 8(DX), Z18, Z10
	VCVTDQ2PS Z19, Z19
	VFMADD231PS.BCST 12(DX), Z19, Z11
	VCVTDQ2PS Z20, Z20
	VFMADD231PS.BCST 16(DX), Z20, Z12
	VCVTDQ2PS Z21, Z21
	VFMADD231PS.BCST 20(DX), Z21, Z13
	VCVTDQ2PS Z22, Z22
	VFMADD231PS.BCST 24(DX), Z22, Z14
	VCVTDQ2PS Z23, Z23
	VFMADD231PS.BCST 28(DX), Z23, Z15
	ADDQ $256, SI
	ADDQ $256, BX
	ADDQ $32, DX
	DECQ AX
	JNZ  blk

	I8X16_GROUP_END_AND_STORE
