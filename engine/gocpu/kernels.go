package gocpu

// Fast kernels for Linear: output rows split across the worker pool; 4-bit
// and 8-bit weights are unpacked a word at a time and folded with the affine
// identity sum((q*s + b) * x) = s*sum(q*x) + b*sum(x) per group.

func (b *Backend) linearFast(w *weight, x []float32, rows int, y []float32) {
	if rows == 1 {
		b.pool.run(w.out, 64, func(lo, hi int) { matvecRows(w, 0, x, y, lo, hi) })
		return
	}
	// Prefill: dequantize a tile of weight rows once, reuse it for every input row.
	const tile = 8
	tiles := (w.out + tile - 1) / tile
	b.pool.run(tiles, 1, func(lo, hi int) {
		buf := make([]float32, tile*w.in)
		for t := lo; t < hi; t++ {
			o0 := t * tile
			n := min(tile, w.out-o0)
			for i := 0; i < n; i++ {
				w.row(0, o0+i, buf[i*w.in:(i+1)*w.in])
			}
			for r := 0; r < rows; r++ {
				xr := x[r*w.in:][:w.in]
				yr := y[r*w.out:]
				for i := 0; i < n; i++ {
					yr[o0+i] = dot(xr, buf[i*w.in:(i+1)*w.in])
				}
			}
		}
	})
}

// dot with four accumulators.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	k := 0
	for ; k+4 <= len(a); k += 4 {
		s0 += a[k] * b[k]
		s1 += a[k+1] * b[k+1]
		s2 += a[k+2] * b[k+2]
		s3 += a[k+3] * b[k+3]
	}
	for ; k < len(a); k++ {
		s0 += a[k] * b[k]
	}
	return (s0 + s1) + (s2 + s3)
}

// matvecRows computes y[o] for o in [lo, hi) from one input vector x.
func matvecRows(w *weight, e int, x []float32, y []float32, lo, hi int) {
	if w.dense != nil {
		for o := lo; o < hi; o++ {
			y[o] = dot(x, w.dense[(e*w.out+o)*w.in:][:w.in])
		}
		return
	}
	gs := w.l.GroupSize
	xsum := make([]float32, w.groups)
	for g := range xsum {
		var s float32
		for _, v := range x[g*gs : (g+1)*gs] {
			s += v
		}
		xsum[g] = s
	}
	switch w.l.Bits {
	case 4:
		wpg := gs / 8 // words per group
		for o := lo; o < hi; o++ {
			words := w.packed[(e*w.out+o)*w.words:][:w.words]
			sc := w.scales[(e*w.out+o)*w.groups:][:w.groups]
			bi := w.biases[(e*w.out+o)*w.groups:][:w.groups]
			var acc float32
			for g := 0; g < w.groups; g++ {
				gw := words[g*wpg : (g+1)*wpg]
				xg := x[g*gs : (g+1)*gs]
				var s0, s1 float32
				for i, q := range gw {
					xs := xg[i*8 : i*8+8]
					s0 += float32(q&15)*xs[0] + float32(q>>4&15)*xs[1] + float32(q>>8&15)*xs[2] + float32(q>>12&15)*xs[3]
					s1 += float32(q>>16&15)*xs[4] + float32(q>>20&15)*xs[5] + float32(q>>24&15)*xs[6] + float32(q>>28)*xs[7]
				}
				acc += sc[g]*(s0+s1) + bi[g]*xsum[g]
			}
			y[o] = acc
		}
	case 8:
		wpg := gs / 4
		for o := lo; o < hi; o++ {
			words := w.packed[(e*w.out+o)*w.words:][:w.words]
			sc := w.scales[(e*w.out+o)*w.groups:][:w.groups]
			bi := w.biases[(e*w.out+o)*w.groups:][:w.groups]
			var acc float32
			for g := 0; g < w.groups; g++ {
				gw := words[g*wpg : (g+1)*wpg]
				xg := x[g*gs : (g+1)*gs]
				var s0, s1 float32
				for i, q := range gw {
					xs := xg[i*4 : i*4+4]
					s0 += float32(q&255)*xs[0] + float32(q>>8&255)*xs[1]
					s1 += float32(q>>16&255)*xs[2] + float32(q>>24)*xs[3]
				}
				acc += sc[g]*(s0+s1) + bi[g]*xsum[g]
			}
			y[o] = acc
		}
	}
}
