// The end of the 8×16 integer-prefill kernels on zmm (kernels_int_bw_amd64.s,
// kernels_int_vnni_amd64.s), which differ only in how a block's integer
// sums are made: per group, the weights' scales (R8) times the block sums
// (Z8-Z15) and the biases (R9) times the rows' group sums (R10) into the
// accumulators Z0-Z7, looping to the label group while CX counts groups;
// then the 8 rows stored ldc (R12) apart from DI.
#define I8X16_GROUP_END_AND_STORE \
	VMOVUPS (R8), Z28; \
	VFMADD231PS Z28, Z8, Z0; \
	VFMADD231PS Z28, Z9, Z1; \
	VFMADD231PS Z28, Z10, Z2; \
	VFMADD231PS Z28, Z11, Z3; \
	VFMADD231PS Z28, Z12, Z4; \
	VFMADD231PS Z28, Z13, Z5; \
	VFMADD231PS Z28, Z14, Z6; \
	VFMADD231PS Z28, Z15, Z7; \
	VMOVUPS (R9), Z28; \
	VFMADD231PS.BCST 0(R10), Z28, Z0; \
	VFMADD231PS.BCST 4(R10), Z28, Z1; \
	VFMADD231PS.BCST 8(R10), Z28, Z2; \
	VFMADD231PS.BCST 12(R10), Z28, Z3; \
	VFMADD231PS.BCST 16(R10), Z28, Z4; \
	VFMADD231PS.BCST 20(R10), Z28, Z5; \
	VFMADD231PS.BCST 24(R10), Z28, Z6; \
	VFMADD231PS.BCST 28(R10), Z28, Z7; \
	ADDQ $64, R8; \
	ADDQ $64, R9; \
	ADDQ $32, R10; \
	DECQ CX; \
	JNZ  group; \
store: \
	VMOVUPS Z0, (DI); \
	ADDQ R12, DI; \
	VMOVUPS Z1, (DI); \
	ADDQ R12, DI; \
	VMOVUPS Z2, (DI); \
	ADDQ R12, DI; \
	VMOVUPS Z3, (DI); \
	ADDQ R12, DI; \
	VMOVUPS Z4, (DI); \
	ADDQ R12, DI; \
	VMOVUPS Z5, (DI); \
	ADDQ R12, DI; \
	VMOVUPS Z6, (DI); \
	ADDQ R12, DI; \
	VMOVUPS Z7, (DI); \
	VZEROUPPER; \
	RET
