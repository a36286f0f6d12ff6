package resample

// The two passes' inner loops. The Go versions are the reference; on amd64
// with AVX2 the same integer sums run eight lanes at a time
// (kernels_amd64.s), byte-identical because int32 sums are exact and wrap
// alike in both.

// horizontal is one horizontal pass: Pillow's coefficients, and the same
// laid out for the vector kernel when the CPU has one.
type horizontal struct {
	c   coeffs
	vec *vecKernel // nil without a vector kernel
	pad int        // zero bytes a source row needs after its w samples
}

// newHorizontal prepares the pass from w to dw samples per row.
func newHorizontal(w, dw int) *horizontal {
	h := &horizontal{c: precompute(w, dw)}
	if hasVectorKernels {
		h.vec = packKernel(&h.c, dw)
		h.pad = h.vec.taps
	}
	return h
}

// row convolves one row's three planes src (w samples, then h.pad zeros)
// into dst's planes, each of at least dw rounded up to 8 bytes.
func (h *horizontal) row(dst, src [3][]uint8) {
	if h.vec != nil {
		for c := range dst {
			h.vec.row(dst[c], src[c])
		}
		return
	}
	c := &h.c
	dw := len(c.bounds) / 2
	dr, dg, db := dst[0][:dw], dst[1][:dw], dst[2][:dw]
	for xx := range dr {
		xmin, cnt := c.bounds[2*xx], c.bounds[2*xx+1]
		k := c.k[xx*c.ksize:][:cnt]
		r, g, b := src[0][xmin:][:cnt], src[1][xmin:][:cnt], src[2][xmin:][:cnt]
		// R and G share one int64 multiply-add (lanes 32 bits apart; the low
		// lane's sign borrow is undone at the end), exact as each lane stays
		// within int32.
		rg, ab := int64(half)|int64(half)<<32, int32(half)
		for t, kv := range k {
			rg += (int64(r[t]) | int64(g[t])<<32) * int64(kv)
			ab += int32(b[t]) * kv
		}
		ar := int32(rg)
		ag := int32((rg - int64(ar)) >> 32)
		dr[xx], dg[xx], db[xx] = clip8(ar), clip8(ag), clip8(ab)
	}
}

// vecKernel is a horizontal pass for the vector kernel: outputs in groups
// of eight, each output's taps zero-padded to a multiple of eight.
type vecKernel struct {
	taps, groups int
	need         int     // source bytes read: the last xmin plus taps
	xmin         []int32 // [groups·8] first input sample of each output
	k            []int32 // [groups][taps/8][8 outputs][8 taps]
}

// packKernel lays c out for the vector kernel.
func packKernel(c *coeffs, dw int) *vecKernel {
	taps := (c.ksize + 7) &^ 7
	chunks, groups := taps/8, (dw+7)/8
	v := &vecKernel{taps: taps, groups: groups, xmin: make([]int32, 8*groups), k: make([]int32, groups*chunks*64)}
	for xx := 0; xx < dw; xx++ {
		g, i := xx/8, xx%8
		xmin, cnt := c.bounds[2*xx], c.bounds[2*xx+1]
		v.xmin[xx] = int32(xmin)
		v.need = max(v.need, xmin+taps)
		for t := 0; t < cnt; t++ {
			v.k[((g*chunks+t/8)*8+i)*8+t%8] = c.k[xx*c.ksize+t]
		}
	}
	return v
}

// verticalRow accumulates whole input rows (stride apart in img) with
// weights k into dst; integer sums make the order irrelevant. With the
// vector kernel len(dst) must be a multiple of 32.
func verticalRow(dst, img []uint8, stride int, k []int32, acc []int32) {
	if hasVectorKernels {
		verticalVec(dst, img, stride, k)
		return
	}
	acc = acc[:len(dst)]
	for i := range acc {
		acc[i] = half
	}
	for j, kv := range k {
		row := img[j*stride:][:len(acc)]
		for i, p := range row {
			acc[i] += int32(p) * kv
		}
	}
	for i, v := range acc {
		dst[i] = clip8(v)
	}
}
