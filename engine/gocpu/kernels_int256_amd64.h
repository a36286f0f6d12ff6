// The end of the ymm integer-prefill quarter kernels (kernels_int_amd64.s,
// kernels_int_avxvnni_amd64.s), which differ only in how a block's integer
// sums are made: per group, the weights' scales (R8) times the block sums
// (Y4-Y7) and the biases (R9) times the rows' group sums (R10) into the
// accumulators Y0-Y3, looping to the label group while CX counts groups;
// then the 4 rows stored ldc (R12) apart from DI.
#define I8X4_GROUP_END_AND_STORE \
	VMOVUPS (R8), Y15; \
	VFMADD231PS Y15, Y4, Y0; \
	VFMADD231PS Y15, Y5, Y1; \
	VFMADD231PS Y15, Y6, Y2; \
	VFMADD231PS Y15, Y7, Y3; \
	VMOVUPS (R9), Y15; \
	VBROADCASTSS 0(R10), Y13; \
	VFMADD231PS Y13, Y15, Y0; \
	VBROADCASTSS 4(R10), Y13; \
	VFMADD231PS Y13, Y15, Y1; \
	VBROADCASTSS 8(R10), Y13; \
	VFMADD231PS Y13, Y15, Y2; \
	VBROADCASTSS 12(R10), Y13; \
	VFMADD231PS Y13, Y15, Y3; \
	ADDQ $64, R8; \
	ADDQ $64, R9; \
	ADDQ $32, R10; \
	DECQ CX; \
	JNZ  group; \
store: \
	VMOVUPS Y0, (DI); \
	ADDQ R12, DI; \
	VMOVUPS Y1, (DI); \
	ADDQ R12, DI; \
	VMOVUPS Y2, (DI); \
	ADDQ R12, DI; \
	VMOVUPS Y3, (DI); \
	VZEROUPPER; \
	RET
