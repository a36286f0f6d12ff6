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

// ARITHS8(op): d[k] = x[k] op v for n (a multiple of 8) values, v
// broadcast: the one IEEE operation per lane of arithScalar's Go loop.
#define ARITHS8(op) \
	MOVQ x+0(FP), SI;       \
	VBROADCASTSS v+8(FP), Y1; \
	MOVQ d+16(FP), DI;      \
	MOVQ n+24(FP), CX;      \
	SHRQ $3, CX;            \
	JZ   done;              \
loop:                     \
	VMOVUPS (SI), Y0;       \
	op Y1, Y0, Y0;          \
	VMOVUPS Y0, (DI);       \
	ADDQ $32, SI;           \
	ADDQ $32, DI;           \
	DECQ CX;                \
	JNZ  loop;              \
done:                     \
	VZEROUPPER;             \
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

// func addS8(x *float32, v float32, d *float32, n int)
TEXT ·addS8(SB), NOSPLIT, $0-32
	ARITHS8(VADDPS)

// func subS8(x *float32, v float32, d *float32, n int)
TEXT ·subS8(SB), NOSPLIT, $0-32
	ARITHS8(VSUBPS)

// func mulS8(x *float32, v float32, d *float32, n int)
TEXT ·mulS8(SB), NOSPLIT, $0-32
	ARITHS8(VMULPS)

// func divS8(x *float32, v float32, d *float32, n int)
TEXT ·divS8(SB), NOSPLIT, $0-32
	ARITHS8(VDIVPS)

// MINMAXS8(op): d[k] = fmax or fmin(x[k], v) (elementwise.go) for n (a
// multiple of 8) values: op (VMAXPS or VMINPS) gives x when it wins the
// comparison and v otherwise, which is the Go rule but for a NaN x, which
// the Go rule keeps (VMAXPS would give v): lanes where x is unordered with
// itself take x back.
#define MINMAXS8(op) \
	MOVQ x+0(FP), SI;       \
	VBROADCASTSS v+8(FP), Y1; \
	MOVQ d+16(FP), DI;      \
	MOVQ n+24(FP), CX;      \
	SHRQ $3, CX;            \
	JZ   done;              \
loop:                     \
	VMOVUPS (SI), Y0;       \
	op Y1, Y0, Y2;          \
	VCMPPS $3, Y0, Y0, Y3;  \
	VBLENDVPS Y3, Y0, Y2, Y2; \
	VMOVUPS Y2, (DI);       \
	ADDQ $32, SI;           \
	ADDQ $32, DI;           \
	DECQ CX;                \
	JNZ  loop;              \
done:                     \
	VZEROUPPER;             \
	RET

// func maxS8(x *float32, v float32, d *float32, n int)
TEXT ·maxS8(SB), NOSPLIT, $0-32
	MINMAXS8(VMAXPS)

// func minS8(x *float32, v float32, d *float32, n int)
TEXT ·minS8(SB), NOSPLIT, $0-32
	MINMAXS8(VMINPS)
