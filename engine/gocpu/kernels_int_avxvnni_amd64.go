//go:build !purego

package gocpu

// q4i8x4avxvnni is q4i8x4 with the products summed by VPDPBUSD in its VEX
// form (kernels_int_avxvnni_amd64.s): AVX-VNNI, no AVX-512 needed.
//
//go:noescape
func q4i8x4avxvnni(p *uint32, s, b *float32, xq *int8, d, xs *float32, groups, bpg int, c *float32, ldc int)

// q4i8AVXVNNI runs the AVX-VNNI kernel on the block's four quarters.
func q4i8AVXVNNI(p []uint32, s, b []float32, xq []int8, d, xs []float32, bpg int, c []float32, ldc int) {
	q4i8Quarters(q4i8x4avxvnni, p, s, b, xq, d, xs, bpg, c, ldc)
}

// avxVNNIKernels is the AVX2 set with the integer prefill's and decode's
// products summed by the VEX VPDPBUSD; its results are the AVX2 set's bit for bit.
var avxVNNIKernels = func() kernelSet {
	k := avx2Kernels
	k.name, k.q4i8 = "avxvnni", q4i8AVXVNNI
	k.q4dotI8, k.q4dotI8F = q4dotI8AVXVNNIw, q4dotI8FAVXVNNIw
	return k
}()
