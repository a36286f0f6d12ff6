//go:build !purego

#include "textflag.h"
#include "kernels_int256_amd64.h"

// AVX-VNNI kernel of the integer prefill, for CPUs with the VEX-encoded
// VPDPBUSD but no AVX-512 (Alder Lake and later Intel cores, Zen 5):
// q4i8x4 (kernels_int_amd64.s, a 4×8 quarter of the block) with each
// row's broadcast bytes met by VPDPBUSD (4 unsigned weight bytes times 4
// signed input bytes into an int32 lane) instead of VPMADDUBSW, VPADDW
// and, per block, VPMADDWD. The integer sums are the same exact integers
// and the float steps the same, so its results are the AVX2 kernel's bit
// for bit. ymm registers only.
//
// Go's assembler writes VPDPBUSD only as EVEX (AVX512_VNNI + AVX512VL), so
// the eight forms used are BYTEs, each named where it is used; they are
// what llvm-mc -mattr=+avxvnni writes for "{vex} vpdpbusd":
// VEX.256.66.0F38.W0 50 /r: C4, ~R ~X ~B 00010 (dst ymm8..11 in reg, ymm15
// in rm: 42), W ~vvvv L pp (vvvv = ymm13: 15, ymm14: 0D), 50, ModRM 11
// reg rm (C7, CF, D7, DF for ymm8..11).
//
// Registers: Y0-Y3 acc per row, Y4-Y7 group sums, Y8-Y11 block int32
// sums, Y12 the nibble mask, Y13-Y14 the step's weights, Y15 the row's
// bytes.

DATA nibblesv<>+0(SB)/4, $0x0f0f0f0f
GLOBL nibblesv<>(SB), RODATA|NOPTR, $4

// DPB(vvvv, modrm): {vex} vpdpbusd ymm(8..11), ymm(13|14), ymm15.
#define DPB(v, m) BYTE $0xC4; BYTE $0x42; BYTE v; BYTE $0x50; BYTE m

// VSTEP(o): the step at o(SI) (panel, 64 bytes apart) and o(BX) (tile).
#define VSTEP(o) \
	VMOVDQU o(SI), Y13;  \
	VPSRLW $4, Y13, Y14; \
	VPAND Y12, Y13, Y13; \
	VPAND Y12, Y14, Y14; \
	VPBROADCASTD o+0(BX), Y15;  \
	DPB($0x15, $0xC7) /* {vex} vpdpbusd ymm8, ymm13, ymm15 */;  \
	VPBROADCASTD o+4(BX), Y15;  \
	DPB($0x0D, $0xC7) /* {vex} vpdpbusd ymm8, ymm14, ymm15 */;  \
	VPBROADCASTD o+8(BX), Y15;  \
	DPB($0x15, $0xCF) /* {vex} vpdpbusd ymm9, ymm13, ymm15 */;  \
	VPBROADCASTD o+12(BX), Y15; \
	DPB($0x0D, $0xCF) /* {vex} vpdpbusd ymm9, ymm14, ymm15 */;  \
	VPBROADCASTD o+16(BX), Y15; \
	DPB($0x15, $0xD7) /* {vex} vpdpbusd ymm10, ymm13, ymm15 */; \
	VPBROADCASTD o+20(BX), Y15; \
	DPB($0x0D, $0xD7) /* {vex} vpdpbusd ymm10, ymm14, ymm15 */; \
	VPBROADCASTD o+24(BX), Y15; \
	DPB($0x15, $0xDF) /* {vex} vpdpbusd ymm11, ymm13, ymm15 */; \
	VPBROADCASTD o+28(BX), Y15; \
	DPB($0x0D, $0xDF) /* {vex} vpdpbusd ymm11, ymm14, ymm15 */

// func q4i8x4avxvnni(p *uint32, s, b *float32, xq *int8, d, xs *float32, groups, bpg int, c *float32, ldc int)
// ldc in bytes.
TEXT ·q4i8x4avxvnni(SB), NOSPLIT, $0-80
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
	VPBROADCASTD nibblesv<>(SB), Y12
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
	VSTEP(0)
	VSTEP(64)
	VSTEP(128)
	VSTEP(192)
	VCVTDQ2PS Y8, Y8
	VBROADCASTSS 0(DX), Y15
	VFMADD231PS Y15, Y8, Y4
	VCVTDQ2PS Y9, Y9
	VBROADCASTSS 4(DX), Y15
	VFMADD231PS Y15, Y9, Y5
	VCVTDQ2PS Y10, Y10
	VBROADCASTSS 8(DX), Y15
	VFMADD231PS Y15, Y10, Y6
	VCVTDQ2PS Y11, Y11
	VBROADCASTSS 12(DX), Y15
	VFMADD231PS Y15, Y11, Y7
	ADDQ $256, SI
	ADDQ $256, BX
	ADDQ $32, DX
	DECQ AX
	JNZ  blk

	I8X4_GROUP_END_AND_STORE
