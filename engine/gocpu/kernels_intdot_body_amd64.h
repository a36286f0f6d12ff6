// The integer decode kernel's body (kernels_intdot_amd64.s,
// kernels_intdot_vnni_amd64.s, kernels_intdot_avxvnni_amd64.s), after its
// TEXT line: each file defines
// I8HALF (one half of a chunk into its 8 lanes) before including it.

// I8CHUNK: one chunk (64 weight bytes, 128 inputs) with the step's
// scales in Y10 and Y11, and on to the next.
#define I8CHUNK \
	PREFETCHT0 4096(SI);             \
	I8HALF(0, 0, 64, 0, Y10, Y14);   \
	I8HALF(32, 32, 96, 32, Y11, Y15); \
	ADDQ $64, SI;                    \
	ADDQ $128, DX;                   \
	ADDQ $64, BX

	I8DOTARGS
	VMOVDQU (AX), Y12
	VMOVDQU 32(AX), Y13
	VPBROADCASTD i8masks<>+0(SB), Y8
	VPBROADCASTD i8masks<>+4(SB), Y9
	VPCMPEQD Y7, Y7, Y7
	VPSLLD $16, Y7, Y7 // 0xffff0000: a bfloat16 pair's high one
	MOVQ n+56(FP), CX
	TESTQ CX, CX
	JZ   done

row:
	VXORPS Y14, Y14, Y14
	VXORPS Y15, Y15, Y15
	MOVQ R10, DX
	MOVQ R11, BX
	MOVQ steps+64(FP), R13
	TESTQ R13, R13
	JZ   tail
	CMPQ f32+112(FP), $0
	JNE  step
	CMPQ gpb+80(FP), $2
	JNE  step
	CMPQ R14, $1
	JNE  step

	// bfloat16 scales in groups of 64 (the checkpoints' layout): a
	// chunk's two scales, one per half, broadcast from one 4-byte load
	// (the low one shifted up, the high one masked): what the general
	// step's VPERMD spread gives
step64:
	VPBROADCASTD (R8), Y4
	VPSLLD $16, Y4, Y10
	VPAND Y7, Y4, Y11
	ADDQ $4, R8
	I8CHUNK
	DECQ R13
	JNZ  step64
	JMP  tail

step:
	CMPQ f32+112(FP), $0
	JNE  stepf
	MOVQ gpb+80(FP), AX
	CMPQ AX, $2
	JEQ  load2
	JGT  load4
	MOVWLZX (R8), AX
	VMOVD AX, X4
	ADDQ $2, R8
	JMP  spread

load2:
	VMOVD (R8), X4
	ADDQ $4, R8
	JMP  spread

load4:
	VMOVQ (R8), X4
	ADDQ $8, R8

spread:
	VPMOVZXWD X4, Y4
	VPSLLD $16, Y4, Y4

spreadf:
	VPERMD Y4, Y12, Y10
	VPERMD Y4, Y13, Y11
	MOVQ R14, AX

chunk:
	I8CHUNK
	DECQ AX
	JNZ  chunk
	DECQ R13
	JNZ  step
	JMP  tail

stepf:
	MOVQ gpb+80(FP), AX
	CMPQ AX, $2
	JEQ  loadf2
	JGT  loadf4
	VMOVSS (R8), X4
	ADDQ $4, R8
	JMP  spreadf

loadf2:
	VMOVQ (R8), X4
	ADDQ $8, R8
	JMP  spreadf

loadf4:
	VMOVUPS (R8), X4
	ADDQ $16, R8
	JMP  spreadf

tail:
	MOVQ tail+88(FP), AX
	TESTQ AX, AX
	JZ   bias
	CMPQ f32+112(FP), $0
	JNE  tailf
	MOVQ gpb+80(FP), AX
	CMPQ AX, $4
	JEQ  tail2
	MOVWLZX (R8), AX
	VMOVD AX, X4
	ADDQ $2, R8
	JMP  tailspread

tail2:
	VMOVD (R8), X4
	ADDQ $4, R8

tailspread:
	VPMOVZXWD X4, Y4
	VPSLLD $16, Y4, Y4

tailspreadf:
	VPERMD Y4, Y12, Y10
	I8HALF(0, 0, 32, 0, Y10, Y14)
	ADDQ $32, SI
	JMP  bias

tailf:
	MOVQ gpb+80(FP), AX
	CMPQ AX, $4
	JEQ  tailf2
	VMOVSS (R8), X4
	ADDQ $4, R8
	JMP  tailspreadf

tailf2:
	VMOVQ (R8), X4
	ADDQ $8, R8
	JMP  tailspreadf

bias:
	MOVQ R12, DX
	MOVQ groups+96(FP), R13
	CMPQ f32+112(FP), $0
	JNE  biasf

bias16:
	CMPQ R13, $16
	JLT  biasrem
	VPMOVZXWD (R9), Y1
	VPSLLD $16, Y1, Y1
	VMULPS (DX), Y1, Y1
	VADDPS Y1, Y14, Y14
	VPMOVZXWD 16(R9), Y1
	VPSLLD $16, Y1, Y1
	VMULPS 32(DX), Y1, Y1
	VADDPS Y1, Y15, Y15
	ADDQ $32, R9
	ADDQ $64, DX
	SUBQ $16, R13
	JMP  bias16

biasf:
	CMPQ R13, $16
	JLT  biasrem
	VMOVUPS (R9), Y1
	VMULPS (DX), Y1, Y1
	VADDPS Y1, Y14, Y14
	VMOVUPS 32(R9), Y1
	VMULPS 32(DX), Y1, Y1
	VADDPS Y1, Y15, Y15
	ADDQ $64, R9
	ADDQ $64, DX
	SUBQ $16, R13
	JMP  biasf

biasrem:
	// groups%16 terms left: 8 of them onto lanes 0..7 and then 4 onto
	// lanes 0..3 (or 8..11) in vectors; the rest onto a zeroed 16-float
	// frame from lane BX on (a frame of single stores read back whole
	// stalls the load, so only the rare leftovers of 1 to 3 take it)
	XORQ BX, BX
	CMPQ R13, $8
	JLT  bias4
	CMPQ f32+112(FP), $0
	JNE  bias8f
	VPMOVZXWD (R9), Y1
	VPSLLD $16, Y1, Y1
	ADDQ $16, R9
	JMP  bias8mul

bias8f:
	VMOVUPS (R9), Y1
	ADDQ $32, R9

bias8mul:
	VMULPS (DX), Y1, Y1
	VADDPS Y1, Y14, Y14
	ADDQ $32, DX
	SUBQ $8, R13
	MOVQ $8, BX

bias4:
	CMPQ R13, $4
	JLT  biasframe
	CMPQ f32+112(FP), $0
	JNE  bias4f
	VMOVQ (R9), X1
	VPMOVZXWD X1, X1
	VPSLLD $16, X1, X1
	ADDQ $8, R9
	JMP  bias4mul

bias4f:
	VMOVUPS (R9), X1
	ADDQ $16, R9

bias4mul:
	VMULPS (DX), X1, X1 // lanes 4..7 of Y1 zero
	ADDQ $16, DX
	SUBQ $4, R13
	TESTQ BX, BX
	JNZ  bias4hi
	VADDPS Y1, Y14, Y14
	MOVQ $4, BX
	JMP  biasframe

bias4hi:
	VADDPS Y1, Y15, Y15
	MOVQ $12, BX

biasframe:
	TESTQ R13, R13
	JZ   biassum
	VXORPS Y1, Y1, Y1
	VMOVUPS Y1, 0(SP)
	VMOVUPS Y1, 32(SP)

biasone:
	CMPQ f32+112(FP), $0
	JNE  biasonef
	MOVWLZX (R9), AX
	SHLL $16, AX
	VMOVD AX, X1
	ADDQ $2, R9
	JMP  biasmul

biasonef:
	VMOVSS (R9), X1
	ADDQ $4, R9

biasmul:
	VMULSS (DX), X1, X1
	VMOVSS X1, 0(SP)(BX*4)
	ADDQ $4, DX
	INCQ BX
	DECQ R13
	JNZ  biasone
	VADDPS 0(SP), Y14, Y14
	VADDPS 32(SP), Y15, Y15

biassum:
	VADDPS Y14, Y15, Y15 // lanes 8..15 plus 0..7: hsum16's first step
	HSUM15
	VMOVSS X0, (DI)
	ADDQ $4, DI
	DECQ CX
	JNZ  row

done:
	VZEROUPPER
	RET
