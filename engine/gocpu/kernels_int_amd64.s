//go:build !purego

#include "textflag.h"
#include "kernels_int256_amd64.h"

// AVX2 kernel of the integer prefill (layouts: intgemm.go; declaration:
// kernels_int_amd64.go): a 4×8 quarter of the 8×16 block (the wrapper
// calls it per quarter), one ymm lane per weight row. Per step of 8
// inputs the panel's 8 packed words are loaded once and unpacked in
// registers (even inputs: masked; odd: shifted and masked); each row's 4
// even and 4 odd int8 are broadcast against them in VPMADDUBSW, whose
// int16 pair sums (≤ 2·15·127) add up over a block's 4 steps to at most
// 8·3810 < 2^15, then VPMADDWD makes them exact int32 sums. Per block
// those are scaled by the row's d, per group by the weights' s, then the
// bias term is added (each a fused multiply-add).
//
// Registers: Y0-Y3 acc per row, Y4-Y7 group sums, Y8-Y11 block int16
// sums, Y12 the nibble mask, Y13-Y14 the step's weights, Y15 a temporary.

DATA nibbles2<>+0(SB)/4, $0x0f0f0f0f
GLOBL nibbles2<>(SB), RODATA|NOPTR, $4
DATA ones16<>+0(SB)/8, $0x0001000100010001
DATA ones16<>+8(SB)/8, $0x0001000100010001
DATA ones16<>+16(SB)/8, $0x0001000100010001
DATA ones16<>+24(SB)/8, $0x0001000100010001
GLOBL ones16<>(SB), RODATA|NOPTR, $32

// YSTEP(o): the step at o(SI) (panel, 64 bytes apart) and o(BX) (tile).
#define YSTEP(o) \
	VMOVDQU o(SI), Y13;  \
	VPSRLW $4, Y13, Y14; \
	VPAND Y12, Y13, Y13; \
	VPAND Y12, Y14, Y14; \
	VPBROADCASTD o+0(BX), Y15; \
	VPMADDUBSW Y15, Y13, Y15; \
	VPADDW Y15, Y8, Y8; \
	VPBROADCASTD o+4(BX), Y15; \
	VPMADDUBSW Y15, Y14, Y15; \
	VPADDW Y15, Y8, Y8; \
	VPBROADCASTD o+8(BX), Y15; \
	VPMADDUBSW Y15, Y13, Y15; \
	VPADDW Y15, Y9, Y9; \
	VPBROADCASTD o+12(BX), Y15; \
	VPMADDUBSW Y15, Y14, Y15; \
	VPADDW Y15, Y9, Y9; \
	VPBROADCASTD o+16(BX), Y15; \
	VPMADDUBSW Y15, Y13, Y15; \
	VPADDW Y15, Y10, Y10; \
	VPBROADCASTD o+20(BX), Y15; \
	VPMADDUBSW Y15, Y14, Y15; \
	VPADDW Y15, Y10, Y10; \
	VPBROADCASTD o+24(BX), Y15; \
	VPMADDUBSW Y15, Y13, Y15; \
	VPADDW Y15, Y11, Y11; \
	VPBROADCASTD o+28(BX), Y15; \
	VPMADDUBSW Y15, Y14, Y15; \
	VPADDW Y15, Y11, Y11

// func q4i8x4(p *uint32, s, b *float32, xq *int8, d, xs *float32, groups, bpg int, c *float32, ldc int)
// ldc in bytes.
TEXT ·q4i8x4(SB), NOSPLIT, $0-80
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
	VPBROADCASTD nibbles2<>(SB), Y12
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	TESTQ CX, CX
	JZ   store

group:
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7
	MOVQ R11, AX

blk:
	VPXOR Y8, Y8, Y8
	VPXOR Y9, Y9, Y9
	VPXOR Y10, Y10, Y10
	VPXOR Y11, Y11, Y11
	YSTEP(0)
	YSTEP(64)
	YSTEP(128)
	YSTEP(192)
	VPMADDWD ones16<>(SB), Y8, Y8
	VCVTDQ2PS Y8, Y8
	VBROADCASTSS 0(DX), Y15
	VFMADD231PS Y15, Y8, Y4
	VPMADDWD ones16<>(SB), Y9, Y9
	VCVTDQ2PS Y9, Y9
	VBROADCASTSS 4(DX), Y15
	VFMADD231PS Y15, Y9, Y5
	VPMADDWD ones16<>(SB), Y10, Y10
	VCVTDQ2PS Y10, Y10
	VBROADCASTSS 8(DX), Y15
	VFMADD231PS Y15, Y10, Y6
	VPMADDWD ones16<>(SB), Y11, Y11
	VCVTDQ2PS Y11, Y11
	VBROADCASTSS 12(DX), Y15
	VFMADD231PS Y15, Y11, Y7
	ADDQ $256, SI
	ADDQ $256, BX
	ADDQ $32, DX
	DECQ AX
	JNZ  blk

	I8X4_GROUP_END_AND_STORE
