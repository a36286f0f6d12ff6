// Macros of the integer decode (intdot.go): its kernels and quantizers.

// I8DOTARGS loads the integer decode kernel's arguments (q4dotI8AVX2):
// SI w, R8 s, R9 b, R10 xq, R11 dl, R12 xs, DI y, R14 cps,
// AX idx.
#define I8DOTARGS \
	MOVQ w+0(FP), SI;     \
	MOVQ s+8(FP), R8;     \
	MOVQ b+16(FP), R9;    \
	MOVQ xq+24(FP), R10;  \
	MOVQ dl+32(FP), R11;  \
	MOVQ xs+40(FP), R12;  \
	MOVQ y+48(FP), DI;    \
	MOVQ cps+72(FP), R14; \
	MOVQ idx+104(FP), AX

// Macros shared by the integer decode's quantizers
// (kernels_intquant_amd64.s, kernels_intquant_avx512_amd64.s). Registers:
// SI x, DI xq, R8 dl, R9 xs, R10 K, CX the group shift, R12 k0 (the
// block's first input), X11 127; d ends in X6, id in X7, d·Σxi in X8.

// QREDUCE(op, x, t): x's 4 lanes combined by op into lane 0.
#define QREDUCE(op, x, t) \
	VPSHUFD $0x4e, x, t; \
	op t, x, x;          \
	VPSHUFD $0xb1, x, t; \
	op t, x, x

// QSCALE: from the largest |x| bit pattern in X4 (the order of
// non-negative floats; NaN above +Inf above every finite value), jump to
// nonfinite, or set d = amax/127 and id = 127/amax (0 where that is not
// finite: an all-zero or subnormal block quantizes to zeros).
#define QSCALE \
	VMOVD X4, AX;         \
	CMPL AX, $0x7f800000; \
	JAE  nonfinite;       \
	VDIVSS X11, X4, X6;   \
	VDIVSS X4, X11, X7;   \
	VMOVD X7, AX;         \
	CMPL AX, $0x7f800000; \
	JNE  idok;            \
	VXORPS X7, X7, X7;    \
idok:

// QOFFSETS: BX = the block's even-input offset c+16b (c = k0 &^ 127, b =
// k0/32 % 4) and DX = the odd inputs' distance from it (64, or 32 in a
// last chunk of 64).
#define QOFFSETS \
	MOVQ R12, AX;   \
	ANDQ $-128, AX; \
	MOVQ R10, DX;   \
	SUBQ AX, DX;    \
	CMPQ DX, $128;  \
	MOVQ $64, DX;   \
	JGE  full;      \
	MOVQ $32, DX;   \
full:               \
	MOVQ R12, BX;   \
	SHRQ $1, BX;    \
	ANDQ $48, BX;   \
	ADDQ AX, BX

// QNEXT: d on the block's 4 lanes of dl, d·Σxi added to its group's xs,
// and on to the next block.
#define QNEXT \
	MOVQ R12, AX;              \
	SHRQ $1, AX;               \
	VBROADCASTSS X6, X3;       \
	VMOVUPS X3, (R8)(AX*1);    \
	MOVQ R12, AX;              \
	SHRQ $5, AX;               \
	SHRQ CX, AX;               \
	VADDSS (R9)(AX*4), X8, X8; \
	VMOVSS X8, (R9)(AX*4);     \
	ADDQ $128, SI;             \
	ADDQ $32, R12;             \
	JMP  block
