// Macros shared by the amd64 matvec kernels (kernels_matvec_amd64.s,
// kernels_matvec_half_amd64.s, kernels_avx512_amd64.s): the 4-bit block
// and its nibble masks, the accumulator helpers and the affine tails
// (Σ_g bias[g]·xs[g]) for float32 and bfloat16 biases, on 8 and 16 lanes.

// Nibble masks 0xF<<4k, k = 0..6 (nibble 7 is taken with a shift); each
// including file gets its own copy of this file-local table.
DATA q4mask<>+0(SB)/4, $0x0000000f
DATA q4mask<>+4(SB)/4, $0x000000f0
DATA q4mask<>+8(SB)/4, $0x00000f00
DATA q4mask<>+12(SB)/4, $0x0000f000
DATA q4mask<>+16(SB)/4, $0x000f0000
DATA q4mask<>+20(SB)/4, $0x00f00000
DATA q4mask<>+24(SB)/4, $0x0f000000
GLOBL q4mask<>(SB), RODATA|NOPTR, $28

// Q4MASKS: Y8..Y14 = the masks.
#define Q4MASKS \
	VPBROADCASTD q4mask<>+0(SB), Y8;  \
	VPBROADCASTD q4mask<>+4(SB), Y9;  \
	VPBROADCASTD q4mask<>+8(SB), Y10; \
	VPBROADCASTD q4mask<>+12(SB), Y11; \
	VPBROADCASTD q4mask<>+16(SB), Y12; \
	VPBROADCASTD q4mask<>+20(SB), Y13; \
	VPBROADCASTD q4mask<>+24(SB), Y14

// Q4BLOCK: 8 words at SI (64 nibbles) against 64 permuted, pre-scaled x at
// DX into Y4..Y7. Nibble k of lane i is masked in place (not shifted): it
// converts to q*2^(4k) exactly and meets x[8i+k]*2^(-4k), so the product
// is q*x.
#define Q4BLOCK \
	VMOVDQU (SI), Y0;            \
	VPAND Y8, Y0, Y1;            \
	VCVTDQ2PS Y1, Y1;            \
	VFMADD231PS (DX), Y1, Y4;    \
	VPAND Y9, Y0, Y2;            \
	VCVTDQ2PS Y2, Y2;            \
	VFMADD231PS 32(DX), Y2, Y5;  \
	VPAND Y10, Y0, Y3;           \
	VCVTDQ2PS Y3, Y3;            \
	VFMADD231PS 64(DX), Y3, Y6;  \
	VPAND Y11, Y0, Y1;           \
	VCVTDQ2PS Y1, Y1;            \
	VFMADD231PS 96(DX), Y1, Y7;  \
	VPAND Y12, Y0, Y2;           \
	VCVTDQ2PS Y2, Y2;            \
	VFMADD231PS 128(DX), Y2, Y4; \
	VPAND Y13, Y0, Y3;           \
	VCVTDQ2PS Y3, Y3;            \
	VFMADD231PS 160(DX), Y3, Y5; \
	VPAND Y14, Y0, Y1;           \
	VCVTDQ2PS Y1, Y1;            \
	VFMADD231PS 192(DX), Y1, Y6; \
	VPSRLD $28, Y0, Y2;          \
	VCVTDQ2PS Y2, Y2;            \
	VFMADD231PS 224(DX), Y2, Y7

#define ZERO4 \
	VXORPS Y4, Y4, Y4; \
	VXORPS Y5, Y5, Y5; \
	VXORPS Y6, Y6, Y6; \
	VXORPS Y7, Y7, Y7

#define SUM4 \
	VADDPS Y5, Y4, Y4; \
	VADDPS Y7, Y6, Y6; \
	VADDPS Y6, Y4, Y4

// HSUM15: X0 = sum of the 8 lanes of Y15.
#define HSUM15 \
	VEXTRACTF128 $1, Y15, X0; \
	VADDPS X15, X0, X0;       \
	VMOVHLPS X0, X0, X1;      \
	VADDPS X1, X0, X0;        \
	VMOVSHDUP X0, X1;         \
	VADDSS X1, X0, X0

// BF16AT(off, x, y): y = the bfloat16 at off(R8) widened and broadcast
// (AX, x scratch); y may be a Y or a Z register.
#define BF16AT(off, x, y) \
	MOVWLZX off(R8), AX; \
	SHLL $16, AX;        \
	VMOVD AX, x;         \
	VBROADCASTSS x, y

// AFFINE_TAIL adds Σ_g bias[g]*xs[g] (R9 biases of the row, advanced; R11
// xs; R12 groups) to Y15, reduces it and stores the result at DI.
#define AFFINE_TAIL \
	MOVQ R11, DX;            \
	MOVQ R12, BX;            \
bias8:                     \
	CMPQ BX, $8;             \
	JLT  bias1;              \
	VMOVUPS (R9), Y1;        \
	VFMADD231PS (DX), Y1, Y15; \
	ADDQ $32, R9;            \
	ADDQ $32, DX;            \
	SUBQ $8, BX;             \
	JMP  bias8;              \
bias1:                     \
	HSUM15;                  \
bias1loop:                 \
	TESTQ BX, BX;            \
	JZ   biasdone;           \
	VMOVSS (R9), X1;         \
	VFMADD231SS (DX), X1, X0; \
	ADDQ $4, R9;             \
	ADDQ $4, DX;             \
	DECQ BX;                 \
	JMP  bias1loop;          \
biasdone:                  \
	VMOVSS X0, (DI);         \
	ADDQ $4, DI

// AFFINE_TAIL_H is AFFINE_TAIL with bfloat16 biases at R9.
#define AFFINE_TAIL_H \
	MOVQ R11, DX;            \
	MOVQ R12, BX;            \
bias8:                     \
	CMPQ BX, $8;             \
	JLT  bias1;              \
	VPMOVZXWD (R9), Y1;      \
	VPSLLD $16, Y1, Y1;      \
	VFMADD231PS (DX), Y1, Y15; \
	ADDQ $16, R9;            \
	ADDQ $32, DX;            \
	SUBQ $8, BX;             \
	JMP  bias8;              \
bias1:                     \
	HSUM15;                  \
bias1loop:                 \
	TESTQ BX, BX;            \
	JZ   biasdone;           \
	MOVWLZX (R9), AX;        \
	SHLL $16, AX;            \
	VMOVD AX, X1;            \
	VFMADD231SS (DX), X1, X0; \
	ADDQ $2, R9;             \
	ADDQ $4, DX;             \
	DECQ BX;                 \
	JMP  bias1loop;          \
biasdone:                  \
	VMOVSS X0, (DI);         \
	ADDQ $4, DI

// The same on 16 lanes (AVX-512).

// Q4MASKS512: Z8..Z14 = the masks.
#define Q4MASKS512 \
	VPBROADCASTD q4mask<>+0(SB), Z8;  \
	VPBROADCASTD q4mask<>+4(SB), Z9;  \
	VPBROADCASTD q4mask<>+8(SB), Z10; \
	VPBROADCASTD q4mask<>+12(SB), Z11; \
	VPBROADCASTD q4mask<>+16(SB), Z12; \
	VPBROADCASTD q4mask<>+20(SB), Z13; \
	VPBROADCASTD q4mask<>+24(SB), Z14

// Q4BLOCK512: 16 words at SI (128 nibbles) against 128 x at DX permuted
// with 16 lanes and pre-scaled, into Z4..Z7 (as Q4BLOCK).
#define Q4BLOCK512 \
	VMOVDQU32 (SI), Z0;           \
	VPANDD Z8, Z0, Z1;            \
	VCVTDQ2PS Z1, Z1;             \
	VFMADD231PS (DX), Z1, Z4;     \
	VPANDD Z9, Z0, Z2;            \
	VCVTDQ2PS Z2, Z2;             \
	VFMADD231PS 64(DX), Z2, Z5;   \
	VPANDD Z10, Z0, Z3;           \
	VCVTDQ2PS Z3, Z3;             \
	VFMADD231PS 128(DX), Z3, Z6;  \
	VPANDD Z11, Z0, Z16;          \
	VCVTDQ2PS Z16, Z16;           \
	VFMADD231PS 192(DX), Z16, Z7; \
	VPANDD Z12, Z0, Z17;          \
	VCVTDQ2PS Z17, Z17;           \
	VFMADD231PS 256(DX), Z17, Z4; \
	VPANDD Z13, Z0, Z18;          \
	VCVTDQ2PS Z18, Z18;           \
	VFMADD231PS 320(DX), Z18, Z5; \
	VPANDD Z14, Z0, Z19;          \
	VCVTDQ2PS Z19, Z19;           \
	VFMADD231PS 384(DX), Z19, Z6; \
	VPSRLD $28, Z0, Z20;          \
	VCVTDQ2PS Z20, Z20;           \
	VFMADD231PS 448(DX), Z20, Z7

#define ZERO4Z \
	VPXORD Z4, Z4, Z4; \
	VPXORD Z5, Z5, Z5; \
	VPXORD Z6, Z6, Z6; \
	VPXORD Z7, Z7, Z7

#define SUM4Z \
	VADDPS Z5, Z4, Z4; \
	VADDPS Z7, Z6, Z6; \
	VADDPS Z6, Z4, Z4

// TAILMASK sets K2 to the low groups%16 bits (groups in R12; uses CX, AX).
#define TAILMASK \
	MOVQ R12, CX; \
	ANDQ $15, CX; \
	MOVL $1, AX;  \
	SHLL CX, AX;  \
	DECL AX;      \
	KMOVW AX, K2

// HSUM512 stores the sum of Z15's 16 lanes at DI and advances DI.
#define HSUM512 \
	VEXTRACTF64X4 $1, Z15, Y0; \
	VADDPS Y15, Y0, Y0;        \
	VEXTRACTF128 $1, Y0, X1;   \
	VADDPS X1, X0, X0;         \
	VMOVHLPS X0, X0, X1;       \
	VADDPS X1, X0, X0;         \
	VMOVSHDUP X0, X1;          \
	VADDSS X1, X0, X0;         \
	VMOVSS X0, (DI);           \
	ADDQ $4, DI

// AFFINE_TAIL512 adds Σ_g bias[g]·xs[g] (R9 biases of the row, advanced;
// R11 xs; R12 groups; K2 from TAILMASK) to Z15, reduces it and stores the
// result at DI.
#define AFFINE_TAIL512 \
	MOVQ R11, DX;              \
	MOVQ R12, BX;              \
bias16:                      \
	CMPQ BX, $16;              \
	JLT  biasrem;              \
	VMOVUPS (R9), Z1;          \
	VFMADD231PS (DX), Z1, Z15; \
	ADDQ $64, R9;              \
	ADDQ $64, DX;              \
	SUBQ $16, BX;              \
	JMP  bias16;               \
biasrem:                     \
	VMOVUPS.Z (R9), K2, Z1;    \
	VMOVUPS.Z (DX), K2, Z2;    \
	VFMADD231PS Z2, Z1, Z15;   \
	LEAQ (R9)(BX*4), R9;       \
	HSUM512

// AFFINE_TAIL512_H is AFFINE_TAIL512 with bfloat16 biases at R9: the same
// lanes, each widened exactly (a masked-off word reads as +0, as the
// float32 tail's masked-off lane does), so the same sum in the same order.
#define AFFINE_TAIL512_H \
	MOVQ R11, DX;              \
	MOVQ R12, BX;              \
bias16:                      \
	CMPQ BX, $16;              \
	JLT  biasrem;              \
	VPMOVZXWD (R9), Z1;        \
	VPSLLD $16, Z1, Z1;        \
	VFMADD231PS (DX), Z1, Z15; \
	ADDQ $32, R9;              \
	ADDQ $64, DX;              \
	SUBQ $16, BX;              \
	JMP  bias16;               \
biasrem:                     \
	VMOVDQU16.Z (R9), K2, Y1;  \
	VPMOVZXWD Y1, Z1;          \
	VPSLLD $16, Z1, Z1;        \
	VMOVUPS.Z (DX), K2, Z2;    \
	VFMADD231PS Z2, Z1, Z15;   \
	LEAQ (R9)(BX*2), R9;       \
	HSUM512

// Q4ARGS loads a 4-bit matvec's pointers and group count.
#define Q4ARGS \
	MOVQ w+0(FP), SI;       \
	MOVQ s+8(FP), R8;       \
	MOVQ b+16(FP), R9;      \
	MOVQ xp+24(FP), R10;    \
	MOVQ xs+32(FP), R11;    \
	MOVQ y+40(FP), DI;      \
	MOVQ groups+56(FP), R12
