//go:build !purego

#include "textflag.h"

// AVX2/FMA float32 tanh (declaration: kernels_amd64.go): tanh(x) ≈
// x·P(x²)/Q(x²) on x clamped to ±7.905311 (where it rounds to ±1), x
// itself for |x| < 4e-4; the coefficients are Eigen's fast float tanh,
// evaluated in tanhGo's order.

DATA tanhc<>+0(SB)/4, $7.90531110763549805
DATA tanhc<>+4(SB)/4, $-7.90531110763549805
DATA tanhc<>+8(SB)/4, $-2.76076847742355e-16 // α13
DATA tanhc<>+12(SB)/4, $2.00018790482477e-13 // α11
DATA tanhc<>+16(SB)/4, $-8.60467152213735e-11 // α9
DATA tanhc<>+20(SB)/4, $5.12229709037114e-08 // α7
DATA tanhc<>+24(SB)/4, $1.48572235717979e-05 // α5
DATA tanhc<>+28(SB)/4, $6.37261928875436e-04 // α3
DATA tanhc<>+32(SB)/4, $4.89352455891786e-03 // α1
DATA tanhc<>+36(SB)/4, $1.19825839466702e-06 // β6
DATA tanhc<>+40(SB)/4, $1.18534705686654e-04 // β4
DATA tanhc<>+44(SB)/4, $2.26843463243900e-03 // β2
DATA tanhc<>+48(SB)/4, $4.89352518554385e-03 // β0
DATA tanhc<>+52(SB)/4, $0.0004
DATA tanhc<>+56(SB)/4, $0x7fffffff
GLOBL tanhc<>(SB), RODATA|NOPTR, $60

// func tanh8(v *float32, n int)
// v[i] = tanh(v[i]) for i < n (n%8 == 0); NaN stays NaN.
TEXT ·tanh8(SB), NOSPLIT, $0-16
	MOVQ v+0(FP), SI
	MOVQ n+8(FP), CX
	SHRQ $3, CX
	JZ   done
	VBROADCASTSS tanhc<>+0(SB), Y14
	VBROADCASTSS tanhc<>+4(SB), Y15
	VBROADCASTSS tanhc<>+52(SB), Y13
	VBROADCASTSS tanhc<>+56(SB), Y12

loop:
	VMOVUPS (SI), Y0              // x
	VMINPS Y0, Y14, Y1            // min(7.9, x); NaN x stays x
	VMAXPS Y1, Y15, Y1            // max(-7.9, ·)
	VMULPS Y1, Y1, Y2             // x²
	VBROADCASTSS tanhc<>+8(SB), Y3
	VBROADCASTSS tanhc<>+12(SB), Y4
	VFMADD213PS Y4, Y2, Y3        // p = α13·x² + α11
	VBROADCASTSS tanhc<>+16(SB), Y4
	VFMADD213PS Y4, Y2, Y3
	VBROADCASTSS tanhc<>+20(SB), Y4
	VFMADD213PS Y4, Y2, Y3
	VBROADCASTSS tanhc<>+24(SB), Y4
	VFMADD213PS Y4, Y2, Y3
	VBROADCASTSS tanhc<>+28(SB), Y4
	VFMADD213PS Y4, Y2, Y3
	VBROADCASTSS tanhc<>+32(SB), Y4
	VFMADD213PS Y4, Y2, Y3
	VMULPS Y1, Y3, Y3             // x·P(x²)
	VBROADCASTSS tanhc<>+36(SB), Y5
	VBROADCASTSS tanhc<>+40(SB), Y4
	VFMADD213PS Y4, Y2, Y5        // q = β6·x² + β4
	VBROADCASTSS tanhc<>+44(SB), Y4
	VFMADD213PS Y4, Y2, Y5
	VBROADCASTSS tanhc<>+48(SB), Y4
	VFMADD213PS Y4, Y2, Y5
	VDIVPS Y5, Y3, Y3             // p/q
	VANDPS Y12, Y0, Y6            // |x|
	VCMPPS $1, Y13, Y6, Y6        // |x| < 4e-4
	VBLENDVPS Y6, Y0, Y3, Y3      // tiny: x itself
	VMOVUPS Y3, (SI)
	ADDQ $32, SI
	DECQ CX
	JNZ  loop

done:
	VZEROUPPER
	RET
