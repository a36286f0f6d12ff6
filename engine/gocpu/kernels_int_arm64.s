//go:build !purego

#include "textflag.h"

// NEON kernel of the integer prefill (layouts: intgemm.go; declaration:
// kernels_int_arm64.go): q4i8Go with each step's products summed by SDOT
// (ARMv8.2 dot product: 4 signed bytes times 4 signed bytes into an int32
// lane; the weights 0..15 are the same as signed bytes). Per block the
// integer sums are exact, then acc += float(sum)·(s·d) and per group
// acc += b·xs, each one fused multiply-add as Go compiles q4i8Go's
// statements on arm64, in q4i8Go's order: its results are q4i8Go's bit
// for bit.
//
// Go's arm64 assembler has no SDOT, SCVTF (vector) or by-element FMUL and
// FMLA, so those are WORDs built from their fields (Arm ARM, "Advanced SIMD
// vector x indexed element" and "two-register miscellaneous"); each use
// names its instruction. Registers:
//	V0..V7   acc: row r's 8 outputs in V(2r) (j 0..3) and V(2r+1) (j 4..7)
//	V16..V23 the block's int32 sums, laid out as acc
//	V24, V25 one step's weights (rows 0..3, rows 4..7; 4 bytes a row)
//	V26      one step's inputs (4 bytes of each of the quad's 4 rows)
//	V27      the block's 4 d, or the group's 4 xs
//	V28, V29 the group's 8 s, then its 8 b
//	V30, V31 s·d of one row

// SDOTE: sdot Vd.4s, Vn.16b, Vm.4b[i].
#define SDOTE(d, n, m, i) WORD $(0x4F80E000 | (((i)&1)<<21) | ((m)<<16) | (((i)>>1)<<11) | ((n)<<5) | (d))

// FMULE: fmul Vd.4s, Vn.4s, Vm.s[i].
#define FMULE(d, n, m, i) WORD $(0x4F809000 | (((i)&1)<<21) | ((m)<<16) | (((i)>>1)<<11) | ((n)<<5) | (d))

// FMLAE: fmla Vd.4s, Vn.4s, Vm.s[i].
#define FMLAE(d, n, m, i) WORD $(0x4F801000 | (((i)&1)<<21) | ((m)<<16) | (((i)>>1)<<11) | ((n)<<5) | (d))

// SCVTF4: scvtf Vd.4s, Vd.4s.
#define SCVTF4(d) WORD $(0x4E21D800 | ((d)<<5) | (d))

// DSTEP: one step of 4 inputs: 32 weight bytes at (R0), 16 input bytes at
// (R3), both advanced; row r's 4 bytes (V26.4b[r]) against each panel row.
#define DSTEP \
	VLD1.P 32(R0), [V24.B16, V25.B16]; \
	VLD1.P 16(R3), [V26.B16];          \
	SDOTE(16, 24, 26, 0) /* sdot v16.4s, v24.16b, v26.4b[0] */; \
	SDOTE(17, 25, 26, 0) /* sdot v17.4s, v25.16b, v26.4b[0] */; \
	SDOTE(18, 24, 26, 1) /* sdot v18.4s, v24.16b, v26.4b[1] */; \
	SDOTE(19, 25, 26, 1) /* sdot v19.4s, v25.16b, v26.4b[1] */; \
	SDOTE(20, 24, 26, 2) /* sdot v20.4s, v24.16b, v26.4b[2] */; \
	SDOTE(21, 25, 26, 2) /* sdot v21.4s, v25.16b, v26.4b[2] */; \
	SDOTE(22, 24, 26, 3) /* sdot v22.4s, v24.16b, v26.4b[3] */; \
	SDOTE(23, 25, 26, 3) /* sdot v23.4s, v25.16b, v26.4b[3] */

// DSCALE(r, A0, A1, I0, I1, i0, i1): row r's acc (A0, A1) += float(its
// sums in I0, I1, numbered i0, i1)·(s·d[r]): t = s·d rounded, then one
// fused multiply-add.
#define DSCALE(r, A0, A1, I0, I1, i0, i1) \
	FMULE(30, 28, 27, r) /* fmul v30.4s, v28.4s, v27.s[r] */; \
	FMULE(31, 29, 27, r) /* fmul v31.4s, v29.4s, v27.s[r] */; \
	SCVTF4(i0)           /* scvtf v(i0).4s, v(i0).4s */;      \
	SCVTF4(i1)           /* scvtf v(i1).4s, v(i1).4s */;      \
	VFMLA V30.S4, I0.S4, A0.S4; \
	VFMLA V31.S4, I1.S4, A1.S4

// DBIAS(r, a0, a1): row r's acc += b·xs[r], one fused multiply-add.
#define DBIAS(r, a0, a1) \
	FMLAE(a0, 28, 27, r) /* fmla v(a0).4s, v28.4s, v27.s[r] */; \
	FMLAE(a1, 29, 27, r) /* fmla v(a1).4s, v29.4s, v27.s[r] */

// func q4i8x4sdot(p *uint32, s, b *float32, xq *int8, d, xs *float32, groups, bpg int, c *float32, ldc int)
// c[r·ldc/4+j] for a quad of 4 input rows r and a panel of 8 weight rows j
// (ldc in bytes): per block of 32 inputs an exact integer sum scaled by
// s·d, per group the bias times the quantized group sum. groups, bpg ≥ 1.
TEXT ·q4i8x4sdot(SB), NOSPLIT, $0-80
	MOVD p+0(FP), R0
	MOVD s+8(FP), R1
	MOVD b+16(FP), R2
	MOVD xq+24(FP), R3
	MOVD d+32(FP), R4
	MOVD xs+40(FP), R5
	MOVD groups+48(FP), R6
	MOVD bpg+56(FP), R7
	MOVD c+64(FP), R8
	MOVD ldc+72(FP), R9
	VEOR V0.B16, V0.B16, V0.B16
	VEOR V1.B16, V1.B16, V1.B16
	VEOR V2.B16, V2.B16, V2.B16
	VEOR V3.B16, V3.B16, V3.B16
	VEOR V4.B16, V4.B16, V4.B16
	VEOR V5.B16, V5.B16, V5.B16
	VEOR V6.B16, V6.B16, V6.B16
	VEOR V7.B16, V7.B16, V7.B16
	CBZ  R6, store

group:
	VLD1.P 32(R1), [V28.S4, V29.S4]
	MOVD   R7, R10

blk:
	VEOR V16.B16, V16.B16, V16.B16
	VEOR V17.B16, V17.B16, V17.B16
	VEOR V18.B16, V18.B16, V18.B16
	VEOR V19.B16, V19.B16, V19.B16
	VEOR V20.B16, V20.B16, V20.B16
	VEOR V21.B16, V21.B16, V21.B16
	VEOR V22.B16, V22.B16, V22.B16
	VEOR V23.B16, V23.B16, V23.B16
	DSTEP
	DSTEP
	DSTEP
	DSTEP
	DSTEP
	DSTEP
	DSTEP
	DSTEP
	VLD1.P 16(R4), [V27.S4]
	DSCALE(0, V0, V1, V16, V17, 16, 17)
	DSCALE(1, V2, V3, V18, V19, 18, 19)
	DSCALE(2, V4, V5, V20, V21, 20, 21)
	DSCALE(3, V6, V7, V22, V23, 22, 23)
	SUBS $1, R10, R10
	BNE  blk

	VLD1.P 32(R2), [V28.S4, V29.S4]
	VLD1.P 16(R5), [V27.S4]
	DBIAS(0, 0, 1)
	DBIAS(1, 2, 3)
	DBIAS(2, 4, 5)
	DBIAS(3, 6, 7)
	SUBS $1, R6, R6
	BNE  group

store:
	VST1 [V0.S4, V1.S4], (R8)
	ADD  R9, R8, R8
	VST1 [V2.S4, V3.S4], (R8)
	ADD  R9, R8, R8
	VST1 [V4.S4, V5.S4], (R8)
	ADD  R9, R8, R8
	VST1 [V6.S4, V7.S4], (R8)
	RET
