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

// SCALAR8(step): d[k] = step(x[k], v) for n (a multiple of 8) values, v
// broadcast in Y1: step takes x in Y0 and leaves the result in Y2.
#define SCALAR8(step) \
	MOVQ x+0(FP), SI;       \
	VBROADCASTSS v+8(FP), Y1; \
	MOVQ d+16(FP), DI;      \
	MOVQ n+24(FP), CX;      \
	SHRQ $3, CX;            \
	JZ   done;              \
loop:                     \
	VMOVUPS (SI), Y0;       \
	step;                   \
	VMOVUPS Y2, (DI);       \
	ADDQ $32, SI;           \
	ADDQ $32, DI;           \
	DECQ CX;                \
	JNZ  loop;              \
done:                     \
	VZEROUPPER;             \
	RET

// The steps: x op v, the one IEEE operation per lane of arithScalar's Go
// loop; and fmax or fmin(x, v) (elementwise.go): VMAXPS/VMINPS give x when
// it wins the comparison and v otherwise, which is the Go rule but for a
// NaN x, which the Go rule keeps (VMAXPS would give v): lanes where x is
// unordered with itself take x back.
#define ADD_S VADDPS Y1, Y0, Y2
#define SUB_S VSUBPS Y1, Y0, Y2
#define MUL_S VMULPS Y1, Y0, Y2
#define DIV_S VDIVPS Y1, Y0, Y2
#define MAX_S VMAXPS Y1, Y0, Y2; VCMPPS $3, Y0, Y0, Y3; VBLENDVPS Y3, Y0, Y2, Y2
#define MIN_S VMINPS Y1, Y0, Y2; VCMPPS $3, Y0, Y0, Y3; VBLENDVPS Y3, Y0, Y2, Y2

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

// func addS8(x *float32, v float32, d *float32, n int)
TEXT ·addS8(SB), NOSPLIT, $0-32
	SCALAR8(ADD_S)

// func subS8(x *float32, v float32, d *float32, n int)
TEXT ·subS8(SB), NOSPLIT, $0-32
	SCALAR8(SUB_S)

// func mulS8(x *float32, v float32, d *float32, n int)
TEXT ·mulS8(SB), NOSPLIT, $0-32
	SCALAR8(MUL_S)

// func divS8(x *float32, v float32, d *float32, n int)
TEXT ·divS8(SB), NOSPLIT, $0-32
	SCALAR8(DIV_S)

// func maxS8(x *float32, v float32, d *float32, n int)
TEXT ·maxS8(SB), NOSPLIT, $0-32
	SCALAR8(MAX_S)

// func minS8(x *float32, v float32, d *float32, n int)
TEXT ·minS8(SB), NOSPLIT, $0-32
	SCALAR8(MIN_S)
