//go:build !purego

#include "textflag.h"

// The AVX2 4/8-bit matvecs of kernels_matvec_amd64.s for 2-byte (bfloat16)
// scales and biases, read and widened in place (declarations:
// kernels_half_amd64.go). Only the scale and bias loads differ.

#include "kernels_amd64.h"

// func q4dotG64H(w *uint32, s, b *uint16, xp, xs, y *float32, n, groups, bpg int)
// For n consecutive rows of 4-bit weights with groups of bpg*64:
// y[r] = Σ_g s[r,g]·Σ_{k∈g} q[r,k]·x[k] + b[r,g]·xs[g].
TEXT ·q4dotG64H(SB), NOSPLIT, $0-72
	MOVQ w+0(FP), SI
	MOVQ s+8(FP), R8
	MOVQ b+16(FP), R9
	MOVQ xp+24(FP), R10
	MOVQ xs+32(FP), R11
	MOVQ y+40(FP), DI
	MOVQ n+48(FP), CX
	MOVQ groups+56(FP), R12
	MOVQ bpg+64(FP), R13
	TESTQ CX, CX
	JZ   done
	Q4MASKS

row:
	VXORPS Y15, Y15, Y15
	MOVQ R10, DX
	PREFETCHT0 512(R8)
	PREFETCHT0 512(R9)
	MOVQ R12, BX

group:
	ZERO4
	MOVQ R13, AX

blk:
	PREFETCHT0 4096(SI) // weights stream from memory: ask ahead
	Q4BLOCK
	ADDQ $32, SI
	ADDQ $256, DX
	DECQ AX
	JNZ  blk
	SUM4
	BF16AT(0, X1, Y1)
	VFMADD231PS Y4, Y1, Y15
	ADDQ $2, R8
	DECQ BX
	JNZ  group

	AFFINE_TAIL_H
	DECQ CX
	JNZ  row

done:
	VZEROUPPER
	RET

// func q4dotG32H(w *uint32, s, b *uint16, xp, xs, y *float32, n, groups int)
// As q4dotG64 for groups of 32: each 8-word block holds two groups (lanes
// 0-3 and 4-7), scaled by a blend of the two scales.
TEXT ·q4dotG32H(SB), NOSPLIT, $0-64
	MOVQ w+0(FP), SI
	MOVQ s+8(FP), R8
	MOVQ b+16(FP), R9
	MOVQ xp+24(FP), R10
	MOVQ xs+32(FP), R11
	MOVQ y+40(FP), DI
	MOVQ n+48(FP), CX
	MOVQ groups+56(FP), R12
	TESTQ CX, CX
	JZ   done
	Q4MASKS
	MOVQ R12, R13
	SHRQ $1, R13

row:
	VXORPS Y15, Y15, Y15
	MOVQ R10, DX
	PREFETCHT0 512(R8)
	PREFETCHT0 512(R9)
	MOVQ R13, BX

blk:
	ZERO4
	PREFETCHT0 4096(SI)
	Q4BLOCK
	ADDQ $32, SI
	ADDQ $256, DX
	SUM4
	BF16AT(0, X1, Y1)
	BF16AT(2, X2, Y2)
	VBLENDPS $0xF0, Y2, Y1, Y1
	VFMADD231PS Y4, Y1, Y15
	ADDQ $4, R8
	DECQ BX
	JNZ  blk

	AFFINE_TAIL_H
	DECQ CX
	JNZ  row

done:
	VZEROUPPER
	RET

// func q8dotH(w *uint32, s, b *uint16, x, xs, y *float32, n, groups, bpg int)
// For n consecutive rows of 8-bit weights with groups of bpg*32, x in
// natural order: y[r] = Σ_g s[r,g]·Σ_{k∈g} q[r,k]·x[k] + b[r,g]·xs[g].
TEXT ·q8dotH(SB), NOSPLIT, $0-72
	MOVQ w+0(FP), SI
	MOVQ s+8(FP), R8
	MOVQ b+16(FP), R9
	MOVQ x+24(FP), R10
	MOVQ xs+32(FP), R11
	MOVQ y+40(FP), DI
	MOVQ n+48(FP), CX
	MOVQ groups+56(FP), R12
	MOVQ bpg+64(FP), R13
	TESTQ CX, CX
	JZ   done

row:
	VXORPS Y15, Y15, Y15
	MOVQ R10, DX
	PREFETCHT0 512(R8)
	PREFETCHT0 512(R9)
	MOVQ R12, BX

group:
	ZERO4
	MOVQ R13, AX

blk:
	PREFETCHT0 4096(SI)
	VPMOVZXBD (SI), Y0
	VCVTDQ2PS Y0, Y0
	VFMADD231PS (DX), Y0, Y4
	VPMOVZXBD 8(SI), Y1
	VCVTDQ2PS Y1, Y1
	VFMADD231PS 32(DX), Y1, Y5
	VPMOVZXBD 16(SI), Y2
	VCVTDQ2PS Y2, Y2
	VFMADD231PS 64(DX), Y2, Y6
	VPMOVZXBD 24(SI), Y3
	VCVTDQ2PS Y3, Y3
	VFMADD231PS 96(DX), Y3, Y7
	ADDQ $32, SI
	ADDQ $128, DX
	DECQ AX
	JNZ  blk
	SUM4
	BF16AT(0, X1, Y1)
	VFMADD231PS Y4, Y1, Y15
	ADDQ $2, R8
	DECQ BX
	JNZ  group

	AFFINE_TAIL_H
	DECQ CX
	JNZ  row

done:
	VZEROUPPER
	RET

