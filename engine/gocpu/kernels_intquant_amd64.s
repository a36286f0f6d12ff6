//go:build !purego

#include "textflag.h"

// AVX2 quantizer of the integer decode: quantizeVecGo's blocks, scales
// and group sums (intdot.go) in vector registers, the same values bit for
// bit (declaration: kernels_intdot_amd64.go). A block's 32 int32 values
// are packed to bytes in order, then each 16-byte lane shuffled to its
// even inputs then its odd ones, and the lanes' halves gathered.

DATA i8q2<>+0(SB)/4, $0x7fffffff  // |·| mask
DATA i8q2<>+4(SB)/4, $0x3f000000  // 0.5
DATA i8q2<>+8(SB)/4, $0x42fe0000  // 127
DATA i8q2<>+12(SB)/4, $0x7fc00000 // NaN
DATA i8q2<>+16(SB)/4, $0          // VPERMD: dword groups back in order
DATA i8q2<>+20(SB)/4, $4
DATA i8q2<>+24(SB)/4, $1
DATA i8q2<>+28(SB)/4, $5
DATA i8q2<>+32(SB)/4, $2
DATA i8q2<>+36(SB)/4, $6
DATA i8q2<>+40(SB)/4, $3
DATA i8q2<>+44(SB)/4, $7
DATA i8q2<>+48(SB)/8, $0x0e0c0a0806040200 // VPSHUFB: even bytes, then odd
DATA i8q2<>+56(SB)/8, $0x0f0d0b0907050301
GLOBL i8q2<>(SB), RODATA|NOPTR, $64

#include "kernels_intdot_amd64.h"

// QROUND2(y, t): y = roundAway(y·id) as int32 (id Y7, |·| mask Y12, 0.5
// Y13): trunc(|y·id| + 0.5) with the sign of y·id (VPSIGND).
#define QROUND2(y, t) \
	VMULPS Y7, y, y;     \
	VANDPS Y12, y, t;    \
	VADDPS Y13, t, t;    \
	VCVTTPS2DQ t, t;     \
	VPSIGND y, t, y

// func quantizeVecAVX2(x *float32, xq *int8, dl, xs *float32, K, shift int)
// As quantizeVec512.
TEXT ·quantizeVecAVX2(SB), NOSPLIT, $0-48
	MOVQ x+0(FP), SI
	MOVQ xq+8(FP), DI
	MOVQ dl+16(FP), R8
	MOVQ xs+24(FP), R9
	MOVQ K+32(FP), R10
	MOVQ shift+40(FP), CX
	VPBROADCASTD i8q2<>+0(SB), Y12
	VPBROADCASTD i8q2<>+4(SB), Y13
	VMOVDQU i8q2<>+16(SB), Y14
	VBROADCASTI128 i8q2<>+48(SB), Y15
	VMOVSS i8q2<>+8(SB), X11 // 127
	XORQ R12, R12

block:
	CMPQ R12, R10
	JGE  done
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	VPAND Y12, Y0, Y4
	VPAND Y12, Y1, Y5
	VPMAXUD Y5, Y4, Y4
	VPAND Y12, Y2, Y5
	VPAND Y12, Y3, Y6
	VPMAXUD Y6, Y5, Y5
	VPMAXUD Y5, Y4, Y4
	VEXTRACTI128 $1, Y4, X5
	VPMAXUD X5, X4, X4
	QREDUCE(VPMAXUD, X4, X5)
	QSCALE
	VBROADCASTSS X7, Y7
	QROUND2(Y0, Y4)
	QROUND2(Y1, Y5)
	QROUND2(Y2, Y4)
	QROUND2(Y3, Y5)
	VPADDD Y1, Y0, Y4
	VPADDD Y3, Y2, Y5
	VPADDD Y5, Y4, Y4
	VEXTRACTI128 $1, Y4, X5
	VPADDD X5, X4, X4
	QREDUCE(VPADDD, X4, X5)
	VCVTDQ2PS X4, X8   // Σxi, exact
	VMULSS X6, X8, X8  // d·Σxi
	JMP  pack

nonfinite:
	VMOVSS i8q2<>+12(SB), X6 // d = NaN, every xi 0
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	VXORPS X4, X4, X4
	VMULSS X4, X6, X8  // NaN·0

pack:
	VPACKSSDW Y1, Y0, Y0
	VPACKSSDW Y3, Y2, Y2
	VPACKSSWB Y2, Y0, Y0
	VPERMD Y0, Y14, Y0
	VPSHUFB Y15, Y0, Y0
	VPERMQ $0xd8, Y0, Y0
	QOFFSETS
	VMOVDQU X0, (DI)(BX*1)
	ADDQ DX, BX
	VEXTRACTI128 $1, Y0, (DI)(BX*1)
	QNEXT

done:
	VZEROUPPER
	RET
