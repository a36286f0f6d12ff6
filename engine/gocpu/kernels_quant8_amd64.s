//go:build !purego

#include "textflag.h"

// AVX2 quantizer of the integer prefill (quant8Go says what it computes;
// declaration: kernels_int_amd64.go): per block of 32 values the largest
// |x| as the integer maximum of the values' bits without sign (so that
// Inf and NaN, whose bits are largest, are seen), d = amax/127, then
// trunc(x·(127/amax) ± 0.5), packed to int8 in the tile's step order; a
// block with Inf or NaN gets d = NaN, one below intTiny d = 0, both zero
// values.

DATA q8abs<>+0(SB)/4, $0x7fffffff
GLOBL q8abs<>(SB), RODATA|NOPTR, $4
DATA q8sign<>+0(SB)/4, $0x80000000
GLOBL q8sign<>(SB), RODATA|NOPTR, $4
DATA q8half<>+0(SB)/4, $0x3f000000
GLOBL q8half<>(SB), RODATA|NOPTR, $4
DATA q8c127<>+0(SB)/4, $0x42fe0000
GLOBL q8c127<>(SB), RODATA|NOPTR, $4
DATA q8nan<>+0(SB)/4, $0x7fc00000
GLOBL q8nan<>(SB), RODATA|NOPTR, $4
// q8perm puts each step's two dwords (inputs 0-3, 4-7) side by side.
DATA q8perm<>+0(SB)/8, $0x0000000400000000
DATA q8perm<>+8(SB)/8, $0x0000000500000001
DATA q8perm<>+16(SB)/8, $0x0000000600000002
DATA q8perm<>+24(SB)/8, $0x0000000700000003
GLOBL q8perm<>(SB), RODATA|NOPTR, $32
// q8even orders each 8 bytes even inputs first: 0 2 4 6 1 3 5 7.
DATA q8even<>+0(SB)/8, $0x0705030106040200
DATA q8even<>+8(SB)/8, $0x0f0d0b090e0c0a08
DATA q8even<>+16(SB)/8, $0x0705030106040200
DATA q8even<>+24(SB)/8, $0x0f0d0b090e0c0a08
GLOBL q8even<>(SB), RODATA|NOPTR, $32

// func quant8x(x *float32, out *int8, d *float32, sums *int32, nblk int)
// Block i: x[32i:], out[256i:] (4 steps of 8 bytes, 64 apart), d[8i],
// sums[i].
TEXT ·quant8x(SB), NOSPLIT, $0-40
	MOVQ x+0(FP), SI
	MOVQ out+8(FP), DI
	MOVQ d+16(FP), DX
	MOVQ sums+24(FP), R8
	MOVQ nblk+32(FP), CX
	VPBROADCASTD q8abs<>(SB), Y15
	VPBROADCASTD q8sign<>(SB), Y14
	VPBROADCASTD q8half<>(SB), Y13
	VMOVDQU q8perm<>(SB), Y10
	TESTQ CX, CX
	JZ   done

block:
	VMOVUPS 0(SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	VPAND Y15, Y0, Y4
	VPAND Y15, Y1, Y5
	VPAND Y15, Y2, Y6
	VPAND Y15, Y3, Y7
	VPMAXUD Y5, Y4, Y4
	VPMAXUD Y7, Y6, Y6
	VPMAXUD Y6, Y4, Y4
	VEXTRACTI128 $1, Y4, X5
	VPMAXUD X5, X4, X4
	VPSHUFD $0x4e, X4, X5
	VPMAXUD X5, X4, X4
	VPSHUFD $0xb1, X4, X5
	VPMAXUD X5, X4, X4
	VMOVD X4, AX
	CMPL AX, $0x7f800000
	JAE  nonfinite
	CMPL AX, $0x03000000 // intTiny, 2^-121
	JB   zero
	VMOVSS q8c127<>(SB), X6
	VDIVSS X4, X6, X7 // 127/amax
	VDIVSS X6, X4, X8 // amax/127
	VMOVSS X8, (DX)
	VBROADCASTSS X7, Y7
	VMULPS Y7, Y0, Y0
	VMULPS Y7, Y1, Y1
	VMULPS Y7, Y2, Y2
	VMULPS Y7, Y3, Y3
	VPAND Y14, Y0, Y4
	VPAND Y14, Y1, Y5
	VPAND Y14, Y2, Y6
	VPAND Y14, Y3, Y8
	VPOR Y13, Y4, Y4
	VPOR Y13, Y5, Y5
	VPOR Y13, Y6, Y6
	VPOR Y13, Y8, Y8
	VADDPS Y4, Y0, Y0
	VADDPS Y5, Y1, Y1
	VADDPS Y6, Y2, Y2
	VADDPS Y8, Y3, Y3
	VCVTTPS2DQ Y0, Y0
	VCVTTPS2DQ Y1, Y1
	VCVTTPS2DQ Y2, Y2
	VCVTTPS2DQ Y3, Y3
	VPADDD Y1, Y0, Y4
	VPADDD Y3, Y2, Y5
	VPADDD Y5, Y4, Y4
	VEXTRACTI128 $1, Y4, X5
	VPADDD X5, X4, X4
	VPSHUFD $0x4e, X4, X5
	VPADDD X5, X4, X4
	VPSHUFD $0xb1, X4, X5
	VPADDD X5, X4, X4
	VMOVD X4, (R8)
	VPACKSSDW Y1, Y0, Y0
	VPACKSSDW Y3, Y2, Y2
	VPACKSSWB Y2, Y0, Y0
	VPERMD Y0, Y10, Y0
	VPSHUFB q8even<>(SB), Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VMOVQ X0, 0(DI)
	VPEXTRQ $1, X0, 64(DI)
	VMOVQ X1, 128(DI)
	VPEXTRQ $1, X1, 192(DI)
	JMP  next

nonfinite:
	VMOVSS q8nan<>(SB), X8
	VMOVSS X8, (DX)
	JMP  clearblk

zero:
	MOVL $0, (DX)

clearblk:
	MOVL $0, (R8)
	MOVQ $0, 0(DI)
	MOVQ $0, 64(DI)
	MOVQ $0, 128(DI)
	MOVQ $0, 192(DI)

next:
	ADDQ $128, SI
	ADDQ $256, DI
	ADDQ $32, DX
	ADDQ $4, R8
	DECQ CX
	JNZ  block

done:
	VZEROUPPER
	RET
