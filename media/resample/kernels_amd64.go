//go:build !purego

package resample

import "golang.org/x/sys/cpu"

// AVX2 kernels (kernels_amd64.s); the wrappers check the bounds the
// assembly relies on.

var hasVectorKernels = cpu.X86.HasAVX2

// hconv8 computes 8·groups outputs: dst[o] = clip8(half + Σ_t src[xmin[o]+t]·k[o][t]).
//
//go:noescape
func hconv8(dst, src *uint8, xmin, k *int32, groups, chunks int)

// vconv32 computes n outputs (n%32 == 0): dst[i] = clip8(half + Σ_j src[j·stride+i]·k[j]).
//
//go:noescape
func vconv32(dst, src *uint8, stride int, k *int32, taps, n int)

// row runs the horizontal pass over one plane row (w samples, then v.taps zeros).
func (v *vecKernel) row(dst, src []uint8) {
	if len(dst) < 8*v.groups || v.need > len(src) || v.taps > len(src) || v.groups == 0 {
		panic("resample: vector kernel bounds")
	}
	hconv8(&dst[0], &src[0], &v.xmin[0], &v.k[0], v.groups, v.taps/8)
}

// verticalVec is verticalRow's vector form.
func verticalVec(dst, img []uint8, stride int, k []int32) {
	n := len(dst)
	if n%32 != 0 || len(k) == 0 || (len(k)-1)*stride+n > len(img) {
		panic("resample: vector kernel bounds")
	}
	vconv32(&dst[0], &img[0], stride, &k[0], len(k), n)
}
