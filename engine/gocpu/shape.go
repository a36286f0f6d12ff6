package gocpu

import (
	"sync/atomic"

	"perch/engine/tensor"
)

// view returns a tensor sharing t's data with another shape.
func view(t *T, shape []int) *T {
	return &T{shape: shape, dt: t.dt, f: t.f, h: t.h, f16: t.f16, i: t.i, u: t.u, b: t.b}
}

func (b *Backend) Reshape(x tensor.Tensor, shape ...int) tensor.Tensor {
	if !b.ok("Reshape", x) {
		return empty
	}
	t := x.(*T)
	out := cloneShape(shape)
	infer, known := -1, 1
	for i, d := range out {
		switch {
		case d == -1 && infer < 0:
			infer = i
		case d < 0:
			return b.fail("Reshape", "bad shape %v", shape)
		default:
			known *= d
		}
	}
	n := t.size()
	if infer >= 0 {
		if known == 0 || n%known != 0 {
			return b.fail("Reshape", "cannot reshape %v to %v", t.shape, shape)
		}
		out[infer] = n / known
		known = n
	}
	if known != n {
		return b.fail("Reshape", "cannot reshape %v to %v", t.shape, shape)
	}
	return view(t, out)
}

// permute copies t into a new tensor with axes reordered.
func permute(t *T, perm []int) *T {
	rank := len(t.shape)
	out := make([]int, rank)
	for i, p := range perm {
		out[i] = t.shape[p]
	}
	st := strides(t.shape)
	src := make([]int, rank) // input stride for each output axis
	for i, p := range perm {
		src[i] = st[p]
	}
	r := &T{shape: out, dt: t.dt}
	n := numel(out)
	var copyAt func(k, ik int)
	switch t.dt {
	case tensor.Int32:
		r.i = make([]int32, n)
		copyAt = func(k, ik int) { r.i[k] = t.i[ik] }
	case tensor.Bool:
		r.b = make([]bool, n)
		copyAt = func(k, ik int) { r.b[k] = t.b[ik] }
	case tensor.Uint32:
		r.u = make([]uint32, n)
		copyAt = func(k, ik int) { r.u[k] = t.u[ik] }
	default:
		r.f = make([]float32, n)
		if rank >= 1 && src[rank-1] == 1 { // inner axis contiguous: copy rows
			inner := out[rank-1]
			idx := make([]int, rank)
			ik := 0
			for k := 0; k < n; k += inner {
				copy(r.f[k:k+inner], t.f[ik:ik+inner])
				ik = nextIndex(idx, out, src, rank-2, ik)
			}
			return r
		}
		copyAt = func(k, ik int) { r.f[k] = t.f[ik] }
	}
	idx := make([]int, rank)
	ik := 0
	for k := 0; k < n; k++ {
		copyAt(k, ik)
		ik = nextIndex(idx, out, src, rank-1, ik)
	}
	return r
}

// nextIndex advances the output index idx (shape out) by one along axes
// 0..last, the last fastest, and returns the input offset ik moved with it
// (src: the input stride of each output axis).
func nextIndex(idx, out, src []int, last, ik int) int {
	for d := last; d >= 0; d-- {
		idx[d]++
		ik += src[d]
		if idx[d] < out[d] {
			break
		}
		ik -= src[d] * out[d]
		idx[d] = 0
	}
	return ik
}

func (b *Backend) Transpose(x tensor.Tensor, perm ...int) tensor.Tensor {
	if !b.ok("Transpose", x) {
		return empty
	}
	t := x.(*T)
	if len(perm) != len(t.shape) {
		return b.fail("Transpose", "permutation %v for rank %d", perm, len(t.shape))
	}
	seen := make([]bool, len(perm))
	for _, p := range perm {
		if p < 0 || p >= len(perm) || seen[p] {
			return b.fail("Transpose", "bad permutation %v", perm)
		}
		seen[p] = true
	}
	return permute(t.wide(), perm)
}

// blocks describes t as [outer, axisLen, inner] around axis.
func blocks(shape []int, axis int) (outer, n, inner int) {
	outer, inner = 1, 1
	for i := 0; i < axis; i++ {
		outer *= shape[i]
	}
	for i := axis + 1; i < len(shape); i++ {
		inner *= shape[i]
	}
	return outer, shape[axis], inner
}

// copyBlocks copies rows of `width` elements between two tensors of the same dtype.
func copyBlocks(dst *T, doff int, src *T, soff int, width int) {
	switch src.dt {
	case tensor.Int32:
		copy(dst.i[doff:doff+width], src.i[soff:soff+width])
	case tensor.Bool:
		copy(dst.b[doff:doff+width], src.b[soff:soff+width])
	case tensor.Uint32:
		copy(dst.u[doff:doff+width], src.u[soff:soff+width])
	default:
		switch {
		case dst.h != nil && src.h != nil && dst.f16 == src.f16:
			copy(dst.h[doff:doff+width], src.h[soff:soff+width])
		case dst.h != nil:
			narrow(dst.h[doff:doff+width], src.wide().f[soff:soff+width], dst.f16)
		case src.h != nil:
			widen(dst.f[doff:doff+width], src.h[soff:soff+width], src.f16)
		default:
			copy(dst.f[doff:doff+width], src.f[soff:soff+width])
		}
	}
}

func alloc(dt tensor.DType, shape []int) *T {
	r := &T{shape: shape, dt: dt}
	n := numel(shape)
	switch dt {
	case tensor.Int32:
		r.i = make([]int32, n)
	case tensor.Bool:
		r.b = make([]bool, n)
	case tensor.Uint32:
		r.u = make([]uint32, n)
	default:
		r.f = make([]float32, n)
	}
	return r
}

func (b *Backend) Slice(x tensor.Tensor, axis, start, end int) tensor.Tensor {
	if !b.ok("Slice", x) {
		return empty
	}
	t := x.(*T)
	ax, err := normAxis(axis, len(t.shape))
	if err != nil {
		return b.fail("Slice", "%v", err)
	}
	if start < 0 || end > t.shape[ax] || start > end {
		return b.fail("Slice", "[%d:%d] outside axis %d of %v", start, end, ax, t.shape)
	}
	outer, n, inner := blocks(t.shape, ax)
	out := cloneShape(t.shape)
	out[ax] = end - start
	if outer == 1 { // contiguous: share the data
		lo, hi := start*inner, end*inner
		return &T{shape: out, dt: t.dt, f: sub(t.f, lo, hi), h: sub(t.h, lo, hi), f16: t.f16, i: sub(t.i, lo, hi), u: sub(t.u, lo, hi), b: sub(t.b, lo, hi)}
	}
	r := alloc(t.dt, out)
	w := (end - start) * inner
	for o := 0; o < outer; o++ {
		copyBlocks(r, o*w, t, o*n*inner+start*inner, w)
	}
	return r
}

func sub[E any](s []E, lo, hi int) []E {
	if s == nil {
		return nil
	}
	return s[lo:hi:hi]
}

func (b *Backend) Concat(axis int, xs ...tensor.Tensor) tensor.Tensor {
	if !b.ok("Concat", xs...) {
		return empty
	}
	if len(xs) == 0 {
		return b.fail("Concat", "nothing to concatenate")
	}
	first := xs[0].(*T)
	ax, err := normAxis(axis, len(first.shape))
	if err != nil {
		return b.fail("Concat", "%v", err)
	}
	out := cloneShape(first.shape)
	out[ax] = 0
	for _, x := range xs {
		t := x.(*T)
		if len(t.shape) != len(out) || t.dt != first.dt {
			return b.fail("Concat", "mismatched %v %v and %v %v", first.shape, first.dt, t.shape, t.dt)
		}
		for i := range out {
			if i != ax && t.shape[i] != first.shape[i] {
				return b.fail("Concat", "mismatched shapes %v and %v on axis %d", first.shape, t.shape, ax)
			}
		}
		out[ax] += t.shape[ax]
	}
	r := alloc(first.dt, out)
	outer, total, inner := blocks(out, ax)
	pos := 0
	for _, x := range xs {
		t := x.(*T)
		w := t.shape[ax] * inner
		for o := 0; o < outer; o++ {
			copyBlocks(r, o*total*inner+pos*inner, t, o*w, w)
		}
		pos += t.shape[ax]
	}
	return r
}

// SliceUpdate writes in place into dst's storage.
func (b *Backend) SliceUpdate(dst, src tensor.Tensor, axis, start int) tensor.Tensor {
	if !b.ok("SliceUpdate", dst, src) {
		return empty
	}
	d, s := dst.(*T), src.(*T)
	ax, err := normAxis(axis, len(d.shape))
	if err != nil {
		return b.fail("SliceUpdate", "%v", err)
	}
	if len(s.shape) != len(d.shape) || d.dt != s.dt && !(d.dt.IsFloat() && s.dt.IsFloat()) {
		return b.fail("SliceUpdate", "cannot write %v %v into %v %v", s.shape, s.dt, d.shape, d.dt)
	}
	for i := range d.shape {
		if i != ax && d.shape[i] != s.shape[i] {
			return b.fail("SliceUpdate", "cannot write %v into %v on axis %d", s.shape, d.shape, ax)
		}
	}
	if start < 0 || start+s.shape[ax] > d.shape[ax] {
		return b.fail("SliceUpdate", "[%d:%d] outside axis %d of %v", start, start+s.shape[ax], ax, d.shape)
	}
	outer, n, inner := blocks(d.shape, ax)
	w := s.shape[ax] * inner
	for o := 0; o < outer; o++ {
		copyBlocks(d, o*n*inner+start*inner, s, o*w, w)
	}
	atomic.StorePointer(&d.wideMemo, nil) // its floats changed
	return d
}

func (b *Backend) Pad(x tensor.Tensor, axis, before, after int, value float64) tensor.Tensor {
	if !b.ok("Pad", x) {
		return empty
	}
	t := x.(*T)
	ax, err := normAxis(axis, len(t.shape))
	if err != nil || before < 0 || after < 0 {
		return b.fail("Pad", "bad axis %d or widths %d, %d for %v", axis, before, after, t.shape)
	}
	out := cloneShape(t.shape)
	out[ax] += before + after
	r := alloc(t.dt, out)
	if value != 0 {
		switch t.dt {
		case tensor.Int32:
			for k := range r.i {
				r.i[k] = int32(value)
			}
		case tensor.Bool:
			for k := range r.b {
				r.b[k] = true
			}
		default:
			for k := range r.f {
				r.f[k] = float32(value)
			}
		}
	}
	return b.SliceUpdate(r, t, ax, before)
}

// indices returns idx's values as ints, checked against bound.
func (b *Backend) indices(op string, idx *T, bound int) ([]int, bool) {
	if idx.dt != tensor.Int32 && idx.dt != tensor.Uint32 {
		b.fail(op, "indices must be integers, are %v", idx.dt)
		return nil, false
	}
	out := make([]int, idx.size())
	for k := range out {
		var v int
		if idx.dt == tensor.Int32 {
			v = int(idx.i[k])
		} else {
			v = int(idx.u[k])
		}
		if v < 0 {
			v += bound
		}
		if v < 0 || v >= bound {
			b.fail(op, "index %d outside [0, %d)", v, bound)
			return nil, false
		}
		out[k] = v
	}
	return out, true
}

func (b *Backend) Take(x, idx tensor.Tensor, axis int) tensor.Tensor {
	if !b.ok("Take", x, idx) {
		return empty
	}
	t, ti := x.(*T), idx.(*T)
	ax, err := normAxis(axis, len(t.shape))
	if err != nil {
		return b.fail("Take", "%v", err)
	}
	ids, ok := b.indices("Take", ti, t.shape[ax])
	if !ok {
		return empty
	}
	outer, n, inner := blocks(t.shape, ax)
	out := append(append(cloneShape(t.shape[:ax]), ti.shape...), t.shape[ax+1:]...)
	r := alloc(t.dt, out)
	for o := 0; o < outer; o++ {
		for j, id := range ids {
			copyBlocks(r, (o*len(ids)+j)*inner, t, (o*n+id)*inner, inner)
		}
	}
	return r
}

func (b *Backend) TakeAlong(x, idx tensor.Tensor, axis int) tensor.Tensor {
	if !b.ok("TakeAlong", x, idx) {
		return empty
	}
	t, ti := x.(*T), idx.(*T)
	ax, err := normAxis(axis, len(t.shape))
	if err != nil || len(ti.shape) != len(t.shape) {
		return b.fail("TakeAlong", "indices %v for %v on axis %d", ti.shape, t.shape, axis)
	}
	for i := range t.shape {
		if i != ax && ti.shape[i] != t.shape[i] {
			return b.fail("TakeAlong", "indices %v do not match %v off axis %d", ti.shape, t.shape, ax)
		}
	}
	ids, ok := b.indices("TakeAlong", ti, t.shape[ax])
	if !ok {
		return empty
	}
	outer, n, inner := blocks(t.shape, ax)
	m := ti.shape[ax]
	r := alloc(t.dt, cloneShape(ti.shape))
	for o := 0; o < outer; o++ {
		for j := 0; j < m; j++ {
			for in := 0; in < inner; in++ {
				k := (o*m+j)*inner + in
				copyBlocks(r, k, t, (o*n+ids[k])*inner+in, 1)
			}
		}
	}
	return r
}
