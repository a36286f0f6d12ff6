//go:build !purego

#include "textflag.h"

// AVX2 colour conversion (declarations: color_amd64.go): libjpeg's
// fancy upsampling in 16-bit lanes and its YCbCr→RGB fixed point in 32-bit
// lanes, exact as the Go loops; the packs clamp to 0..255.

// Eight lanes each: 128, 1<<15 (rounding), then round(x·2^16) for 1.402,
// -0.34414, -0.71414 and 1.772 (libjpeg's jdcolor.c constants).
#define LANES8(off, v) \
	DATA yccconst<>+(off+0)(SB)/4, v \
	DATA yccconst<>+(off+4)(SB)/4, v \
	DATA yccconst<>+(off+8)(SB)/4, v \
	DATA yccconst<>+(off+12)(SB)/4, v \
	DATA yccconst<>+(off+16)(SB)/4, v \
	DATA yccconst<>+(off+20)(SB)/4, v \
	DATA yccconst<>+(off+24)(SB)/4, v \
	DATA yccconst<>+(off+28)(SB)/4, v

LANES8(0, $128)
LANES8(32, $32768)
LANES8(64, $91881)
LANES8(96, $-22554)
LANES8(128, $-46802)
LANES8(160, $116130)
GLOBL yccconst<>(SB), RODATA|NOPTR, $192

// func upsample16(out, near, far *uint8, blocks int, even, odd int16)
// Per 16 chroma columns: column sums 3·near + far at i-1, i, i+1, then
// even = (3·this + prev + even) >> 4 and odd = (3·this + next + odd) >> 4,
// stored as byte pairs (even | odd<<8 in each 16-bit lane).
TEXT ·upsample16(SB), NOSPLIT, $0-36
	MOVQ out+0(FP), DI
	MOVQ near+8(FP), SI
	MOVQ far+16(FP), DX
	MOVQ blocks+24(FP), CX
	VPBROADCASTW even+32(FP), Y14
	VPBROADCASTW odd+34(FP), Y15

uloop:
	VPMOVZXBW 0(SI), Y0
	VPMOVZXBW 1(SI), Y1
	VPMOVZXBW 2(SI), Y2
	VPMOVZXBW 0(DX), Y3
	VPMOVZXBW 1(DX), Y4
	VPMOVZXBW 2(DX), Y5
	VPADDW Y0, Y0, Y6
	VPADDW Y6, Y0, Y6
	VPADDW Y3, Y6, Y0 // prev
	VPADDW Y1, Y1, Y6
	VPADDW Y6, Y1, Y6
	VPADDW Y4, Y6, Y1 // this
	VPADDW Y2, Y2, Y6
	VPADDW Y6, Y2, Y6
	VPADDW Y5, Y6, Y2 // next
	VPADDW Y1, Y1, Y6
	VPADDW Y6, Y1, Y6 // 3·this
	VPADDW Y6, Y0, Y0
	VPADDW Y14, Y0, Y0
	VPSRLW $4, Y0, Y0
	VPADDW Y6, Y2, Y2
	VPADDW Y15, Y2, Y2
	VPSRLW $4, Y2, Y2
	VPSLLW $8, Y2, Y2
	VPOR Y2, Y0, Y0
	VMOVDQU Y0, (DI)
	ADDQ $16, SI
	ADDQ $16, DX
	ADDQ $32, DI
	DECQ CX
	JNZ uloop
	VZEROUPPER
	RET

// Packs two registers of 8 int32 (lo, hi) into 16 clamped bytes at dst.
#define PACK16(LO, HI, XLO, DST) \
	VPACKSSDW HI, LO, LO \
	VPERMQ $0xD8, LO, LO \
	VEXTRACTI128 $1, LO, X9 \
	VPACKUSWB X9, XLO, XLO \
	VMOVDQU XLO, (DST)

// func ycc16(y, cb, cr, dr, dg, db *uint8, blocks int)
// R = Y + (1.402·v + ½) >> 16, G = Y + (-0.34414·u - 0.71414·v + ½) >> 16,
// B = Y + (1.772·u + ½) >> 16 with u = Cb-128, v = Cr-128, 16 pixels a block.
TEXT ·ycc16(SB), NOSPLIT, $0-56
	MOVQ y+0(FP), AX
	MOVQ cb+8(FP), BX
	MOVQ cr+16(FP), CX
	MOVQ dr+24(FP), DI
	MOVQ dg+32(FP), SI
	MOVQ db+40(FP), DX
	MOVQ blocks+48(FP), R8
	VMOVDQU yccconst<>+0(SB), Y13
	VMOVDQU yccconst<>+32(SB), Y14

yloop:
	VPMOVZXBD 0(AX), Y0
	VPMOVZXBD 8(AX), Y1
	VPMOVZXBD 0(BX), Y2
	VPMOVZXBD 8(BX), Y3
	VPMOVZXBD 0(CX), Y4
	VPMOVZXBD 8(CX), Y5
	VPSUBD Y13, Y2, Y2
	VPSUBD Y13, Y3, Y3
	VPSUBD Y13, Y4, Y4
	VPSUBD Y13, Y5, Y5

	VPMULLD yccconst<>+64(SB), Y4, Y6
	VPMULLD yccconst<>+64(SB), Y5, Y7
	VPADDD Y14, Y6, Y6
	VPADDD Y14, Y7, Y7
	VPSRAD $16, Y6, Y6
	VPSRAD $16, Y7, Y7
	VPADDD Y0, Y6, Y6
	VPADDD Y1, Y7, Y7
	PACK16(Y6, Y7, X6, DI)

	VPMULLD yccconst<>+96(SB), Y2, Y6
	VPMULLD yccconst<>+128(SB), Y4, Y8
	VPADDD Y8, Y6, Y6
	VPMULLD yccconst<>+96(SB), Y3, Y7
	VPMULLD yccconst<>+128(SB), Y5, Y8
	VPADDD Y8, Y7, Y7
	VPADDD Y14, Y6, Y6
	VPADDD Y14, Y7, Y7
	VPSRAD $16, Y6, Y6
	VPSRAD $16, Y7, Y7
	VPADDD Y0, Y6, Y6
	VPADDD Y1, Y7, Y7
	PACK16(Y6, Y7, X6, SI)

	VPMULLD yccconst<>+160(SB), Y2, Y6
	VPMULLD yccconst<>+160(SB), Y3, Y7
	VPADDD Y14, Y6, Y6
	VPADDD Y14, Y7, Y7
	VPSRAD $16, Y6, Y6
	VPSRAD $16, Y7, Y7
	VPADDD Y0, Y6, Y6
	VPADDD Y1, Y7, Y7
	PACK16(Y6, Y7, X6, DX)

	ADDQ $16, AX
	ADDQ $16, BX
	ADDQ $16, CX
	ADDQ $16, DI
	ADDQ $16, SI
	ADDQ $16, DX
	DECQ R8
	JNZ yloop
	VZEROUPPER
	RET
