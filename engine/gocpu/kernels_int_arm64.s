//go:build !purego

#include "textflag.h"

// NEON kernel of the integer prefill (layouts: intgemm.go; declaration:
// kernels_int_arm64.go): a 4×8 quarter of the 8×16 block (the wrapper
// calls it per quarter, as the AVX2 kernel), with each step's products
// summed by SDOT (ARMv8.2 dot product: 4 signed bytes times 4 signed bytes
// into an int32 lane; the weights 0..15 are the same as signed bytes).
// Per step of 8 inputs the panel's 8 packed words are loaded once and
// unpacked in registers (even inputs: masked; odd: shifted); each row's 4
// even and 4 odd int8 are one 4-byte element each of the tile's vector.
// Per block the exact sums are scaled by the row's d, per group by the
// weights' s, then the bias term is added, each one fused multiply-add as
// Go compiles q4i8Go's statements on arm64, in q4i8Go's order: its results
// are q4i8Go's bit for bit.
//
// Go's arm64 assembler has no SDOT, SCVTF (vector) or by-element FMLA, so
// those are WORDs built from their fields (Arm ARM, "Advanced SIMD vector
// x indexed element" and "two-register miscellaneous"); each use names
// its instruction. Registers:
//	V0..V7   acc: row r's 8 outputs in V(2r) (j 0..3) and V(2r+1) (j 4..7)
//	V8..V15  the group's sums, laid out as acc
//	V16..V23 the block's int32 sums, laid out as acc
//	V24, V25 a step's even weights (j 0..3, 4..7); then s
//	V26, V27 a step's odd weights; then b
//	V28, V29 a step's tile bytes (rows 0, 1; rows 2, 3); then xs
//	V30      the block's 4 d
//	V31      the nibble mask

// SDOTE: sdot Vd.4s, Vn.16b, Vm.4b[i].
#define SDOTE(d, n, m, i) WORD $(0x4F80E000 | (((i)&1)<<21) | ((m)<<16) | (((i)>>1)<<11) | ((n)<<5) | (d))

// FMLAE: fmla Vd.4s, Vn.4s, Vm.s[i].
#define FMLAE(d, n, m, i) WORD $(0x4F801000 | (((i)&1)<<21) | ((m)<<16) | (((i)>>1)<<11) | ((n)<<5) | (d))

// SCVTF4: scvtf Vd.4s, Vd.4s.
#define SCVTF4(d) WORD $(0x4E21D800 | ((d)<<5) | (d))

// DSTEP: the step at (R0) (panel, 64 bytes apart) and (R3) (tile, 64
// bytes apart), both advanced.
#define DSTEP \
	VLD1 (R0), [V24.B16, V25.B16]; \
	ADD  $64, R0;                  \
	VLD1 (R3), [V28.B16, V29.B16]; \
	ADD  $64, R3;                  \
	VUSHR $4, V24.B16, V26.B16;    \
	VUSHR $4, V25.B16, V27.B16;    \
	VAND V31.B16, V24.B16, V24.B16; \
	VAND V31.B16, V25.B16, V25.B16; \
	SDOTE(16, 24, 28, 0) /* sdot v16.4s, v24.16b, v28.4b[0] */; \
	SDOTE(17, 25, 28, 0) /* sdot v17.4s, v25.16b, v28.4b[0] */; \
	SDOTE(16, 26, 28, 1) /* sdot v16.4s, v26.16b, v28.4b[1] */; \
	SDOTE(17, 27, 28, 1) /* sdot v17.4s, v27.16b, v28.4b[1] */; \
	SDOTE(18, 24, 28, 2) /* sdot v18.4s, v24.16b, v28.4b[2] */; \
	SDOTE(19, 25, 28, 2) /* sdot v19.4s, v25.16b, v28.4b[2] */; \
	SDOTE(18, 26, 28, 3) /* sdot v18.4s, v26.16b, v28.4b[3] */; \
	SDOTE(19, 27, 28, 3) /* sdot v19.4s, v27.16b, v28.4b[3] */; \
	SDOTE(20, 24, 29, 0) /* sdot v20.4s, v24.16b, v29.4b[0] */; \
	SDOTE(21, 25, 29, 0) /* sdot v21.4s, v25.16b, v29.4b[0] */; \
	SDOTE(20, 26, 29, 1) /* sdot v20.4s, v26.16b, v29.4b[1] */; \
	SDOTE(21, 27, 29, 1) /* sdot v21.4s, v27.16b, v29.4b[1] */; \
	SDOTE(22, 24, 29, 2) /* sdot v22.4s, v24.16b, v29.4b[2] */; \
	SDOTE(23, 25, 29, 2) /* sdot v23.4s, v25.16b, v29.4b[2] */; \
	SDOTE(22, 26, 29, 3) /* sdot v22.4s, v26.16b, v29.4b[3] */; \
	SDOTE(23, 27, 29, 3) /* sdot v23.4s, v27.16b, v29.4b[3] */

// DSCALE(i, g, r): the group sums g += float(block sums i)·d[r], one fused
// multiply-add.
#define DSCALE(i, g, r) \
	SCVTF4(i)          /* scvtf v(i).4s, v(i).4s */; \
	FMLAE(g, i, 30, r) /* fmla v(g).4s, v(i).4s, v30.s[r] */

// DBIAS(a, n, r): acc a += b (in v(n))·xs[r], one fused multiply-add.
#define DBIAS(a, n, r) FMLAE(a, n, 28, r) /* fmla v(a).4s, v(n).4s, v28.s[r] */

// func q4i8x4sdot(p *uint32, s, b *float32, xq *int8, d, xs *float32, groups, bpg int, c *float32, ldc int)
// ldc in bytes; groups, bpg ≥ 1.
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
	VMOVI $15, V31.B16
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
	VEOR V8.B16, V8.B16, V8.B16
	VEOR V9.B16, V9.B16, V9.B16
	VEOR V10.B16, V10.B16, V10.B16
	VEOR V11.B16, V11.B16, V11.B16
	VEOR V12.B16, V12.B16, V12.B16
	VEOR V13.B16, V13.B16, V13.B16
	VEOR V14.B16, V14.B16, V14.B16
	VEOR V15.B16, V15.B16, V15.B16
	MOVD R7, R10

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
	VLD1 (R4), [V30.S4]
	ADD  $32, R4
	DSCALE(16, 8, 0)
	DSCALE(17, 9, 0)
	DSCALE(18, 10, 1)
	DSCALE(19, 11, 1)
	DSCALE(20, 12, 2)
	DSCALE(21, 13, 2)
	DSCALE(22, 14, 3)
	DSCALE(23, 15, 3)
	SUBS $1, R10, R10
	BNE  blk

	// acc += group sums·s, then acc += b·xs.
	VLD1  (R1), [V24.S4, V25.S4]
	ADD   $64, R1
	VFMLA V24.S4, V8.S4, V0.S4
	VFMLA V25.S4, V9.S4, V1.S4
	VFMLA V24.S4, V10.S4, V2.S4
	VFMLA V25.S4, V11.S4, V3.S4
	VFMLA V24.S4, V12.S4, V4.S4
	VFMLA V25.S4, V13.S4, V5.S4
	VFMLA V24.S4, V14.S4, V6.S4
	VFMLA V25.S4, V15.S4, V7.S4
	VLD1  (R2), [V26.S4, V27.S4]
	ADD   $64, R2
	VLD1  (R5), [V28.S4]
	ADD   $32, R5
	DBIAS(0, 26, 0)
	DBIAS(1, 27, 0)
	DBIAS(2, 26, 1)
	DBIAS(3, 27, 1)
	DBIAS(4, 26, 2)
	DBIAS(5, 27, 2)
	DBIAS(6, 26, 3)
	DBIAS(7, 27, 3)
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
