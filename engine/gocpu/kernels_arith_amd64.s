//go:build !purego

#include "textflag.h"

// AVX2 elementwise arithmetic (declaration: kernels_arith_amd64.go).

// ARITH8(op): d[k] = x[k] op y[k] for n (a multiple of 8) values; each
// lane is the one IEEE operation the Go loop does, so the bits agree.
#define ARITH8(op) \
	MOVQ x+0(FP), SI;   \
	MOVQ y+8(FP), DX;   \
	MOVQ d+16(FP), DI;  \
	MOVQ n+24(FP), CX;  \
	SHRQ $3, CX;        \
	JZ   done;          \
loop:                 \
	VMOVUPS (SI), Y0;   \
	op (DX), Y0, Y0;    \
	VMOVUPS Y0, (DI);   \
	ADDQ $32, SI;       \
	ADDQ $32, DX;       \
	ADDQ $32, DI;       \
	DECQ CX;            \
	JNZ  loop;          \
done:                 \
	VZEROUPPER;         \
	RET

// func add8(x, y, d *float32, n int)
TEXT ·add8(SB), NOSPLIT, $0-32
	ARITH8(VADDPS)

// func sub8(x, y, d *float32, n int)
TEXT ·sub8(SB), NOSPLIT, $0-32
	ARITH8(VSUBPS)

// func mul8(x, y, d *float32, n int)
TEXT ·mul8(SB), NOSPLIT, $0-32
	ARITH8(VMULPS)

// func div8(x, y, d *float32, n int)
TEXT ·div8(SB), NOSPLIT, $0-32
	ARITH8(VDIVPS)
