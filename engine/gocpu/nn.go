package gocpu

import (
	"math"

	"perch/engine/tensor"
)

// MatMul multiplies the last two axes, broadcasting the leading ones.
func (b *Backend) MatMul(x, y tensor.Tensor) tensor.Tensor {
	if !b.ok("MatMul", x, y) {
		return empty
	}
	ta, tb := x.(*T), y.(*T)
	if len(ta.shape) < 2 || len(tb.shape) < 2 {
		return b.fail("MatMul", "needs rank >= 2, got %v and %v", ta.shape, tb.shape)
	}
	m, k := ta.shape[len(ta.shape)-2], ta.shape[len(ta.shape)-1]
	k2, n := tb.shape[len(tb.shape)-2], tb.shape[len(tb.shape)-1]
	if k != k2 {
		return b.fail("MatMul", "inner dimensions differ: %v @ %v", ta.shape, tb.shape)
	}
	batch, err := broadcastShapes(ta.shape[:len(ta.shape)-2], tb.shape[:len(tb.shape)-2])
	if err != nil {
		return b.fail("MatMul", "%v", err)
	}
	fa, fb := asFloats(ta), asFloats(tb)
	r := newF(append(cloneShape(batch), m, n)...)
	var jobs []matmulJob
	bindex(ta.shape[:len(ta.shape)-2], tb.shape[:len(tb.shape)-2], batch, func(kk, ia, ib int) {
		jobs = append(jobs, matmulJob{ia * m * k, ib * k * n, kk * m * n})
	})
	if !b.opt.Plain {
		b.matmulFast(fa, fb, jobs, m, k, n, r.f)
		return r
	}
	b.pool.run(len(jobs)*m, max(1, 4096/(k*n+1)), func(lo, hi int) {
		for w := lo; w < hi; w++ {
			j, row := jobs[w/m], w%m
			out := r.f[j.ir+row*n : j.ir+row*n+n]
			arow := fa[j.ia+row*k : j.ia+row*k+k]
			for kk, av := range arow {
				if av == 0 {
					continue
				}
				brow := fb[j.ib+kk*n : j.ib+kk*n+n]
				for c := range out {
					out[c] += av * brow[c]
				}
			}
		}
	})
	return r
}

func (b *Backend) RMSNorm(x, w tensor.Tensor, eps float32) tensor.Tensor {
	if w == nil {
		if !b.ok("RMSNorm", x) {
			return empty
		}
	} else if !b.ok("RMSNorm", x, w) {
		return empty
	}
	t := x.(*T)
	d := t.shape[len(t.shape)-1]
	var wf []float32
	if w != nil {
		tw := w.(*T)
		if tw.size() != d {
			return b.fail("RMSNorm", "weight %v for rows of %d", tw.shape, d)
		}
		wf = readOnlyFloats(tw)
	}
	in := asFloats(t)
	r := newF(t.shape...)
	rows := len(in) / max(d, 1)
	b.pool.run(rows, max(1, 8192/max(d, 1)), func(lo, hi int) {
		for row := lo; row < hi; row++ {
			v := in[row*d : row*d+d]
			var ss float32
			for _, e := range v {
				ss += e * e
			}
			inv := float32(1 / math.Sqrt(float64(ss/float32(d)+eps)))
			o := r.f[row*d : row*d+d]
			for c, e := range v {
				o[c] = e * inv
				if wf != nil {
					o[c] *= wf[c]
				}
			}
		}
	})
	return r
}

func (b *Backend) LayerNorm(x, w, bias tensor.Tensor, eps float32) tensor.Tensor {
	args := []tensor.Tensor{x}
	for _, a := range []tensor.Tensor{w, bias} {
		if a != nil {
			args = append(args, a)
		}
	}
	if !b.ok("LayerNorm", args...) {
		return empty
	}
	t := x.(*T)
	d := t.shape[len(t.shape)-1]
	var wf, bf []float32
	if w != nil {
		wf = asFloats(w.(*T))
	}
	if bias != nil {
		bf = asFloats(bias.(*T))
	}
	if (wf != nil && len(wf) != d) || (bf != nil && len(bf) != d) {
		return b.fail("LayerNorm", "weight/bias sizes do not match rows of %d", d)
	}
	in := asFloats(t)
	r := newF(t.shape...)
	for row := 0; row*d < len(in); row++ {
		v := in[row*d : row*d+d]
		var mean float32
		for _, e := range v {
			mean += e
		}
		mean /= float32(d)
		var vr float32
		for _, e := range v {
			vr += (e - mean) * (e - mean)
		}
		inv := float32(1 / math.Sqrt(float64(vr/float32(d)+eps)))
		o := r.f[row*d : row*d+d]
		for c, e := range v {
			o[c] = (e - mean) * inv
			if wf != nil {
				o[c] *= wf[c]
			}
			if bf != nil {
				o[c] += bf[c]
			}
		}
	}
	return r
}

// RoPE follows MLX's composed definition: inv_freq = exp(-i*log(base)/half)
// (or 1/freqs), theta = (offset+t)*scale*inv_freq, all in float32.
func (b *Backend) RoPE(x tensor.Tensor, dims int, traditional bool, base, scale float32, offset int, freqs tensor.Tensor) tensor.Tensor {
	args := []tensor.Tensor{x}
	if freqs != nil {
		args = append(args, freqs)
	}
	if !b.ok("RoPE", args...) {
		return empty
	}
	t := x.(*T)
	if len(t.shape) < 3 || dims <= 0 || dims%2 != 0 || dims > t.shape[len(t.shape)-1] {
		return b.fail("RoPE", "dims %d for input %v", dims, t.shape)
	}
	half := dims / 2
	var fr []float32
	if freqs != nil {
		if fr = asFloats(freqs.(*T)); len(fr) != half {
			return b.fail("RoPE", "freqs has %d values, want %d", len(fr), half)
		}
	}
	D := t.shape[len(t.shape)-1]
	L := t.shape[len(t.shape)-2]
	in := asFloats(t)
	r := newF(t.shape...)
	key := ropeKey{offset: offset, half: half, base: base, scale: scale}
	if freqs != nil {
		key.freqs = freqs.(*T)
	}
	cos, sin := b.rope.get(key, L)
	if cos == nil {
		cos, sin = b.ropeTables(fr, half, L, base, scale, offset)
		b.rope.put(key, L, cos, sin)
	}
	rows := len(in) / D
	b.pool.run(rows, max(1, 8192/D), func(lo, hi int) { // each row copied, then rotated
		copy(r.f[lo*D:hi*D], in[lo*D:hi*D])
		for row := lo; row < hi; row++ {
			l := row % L
			v := in[row*D : row*D+D]
			o := r.f[row*D : row*D+D]
			cs, sn := cos[l*half:(l+1)*half], sin[l*half:(l+1)*half]
			for i := 0; i < half; i++ {
				var a, c int
				if traditional {
					a, c = 2*i, 2*i+1
				} else {
					a, c = i, i+half
				}
				x1, x2 := v[a], v[c]
				o[a] = x1*cs[i] - x2*sn[i]
				o[c] = x1*sn[i] + x2*cs[i]
			}
		}
	})
	return r
}

// ropeTables computes RoPE's cos and sin [L][half] for positions offset..
// offset+L-1 scaled by scale, at frequencies fr (or base^(-i/half)).
func (b *Backend) ropeTables(fr []float32, half, L int, base, scale float32, offset int) (cos, sin []float32) {
	inv := make([]float32, half)
	if fr != nil {
		for i, f := range fr {
			inv[i] = 1 / f
		}
	} else {
		c := float32(math.Log(float64(base)) / float64(half))
		for i := range inv {
			inv[i] = float32(math.Exp(float64(float32(-i) * c)))
		}
	}
	cos = make([]float32, L*half)
	sin = make([]float32, L*half)
	b.pool.run(L, max(1, 1024/half), func(lo, hi int) {
		for l := lo; l < hi; l++ {
			pos := float32(offset+l) * scale
			for i := 0; i < half; i++ {
				th := pos * inv[i]
				cos[l*half+i] = float32(math.Cos(float64(th)))
				sin[l*half+i] = float32(math.Sin(float64(th)))
			}
		}
	})
	return cos, sin
}

// SDPA computes attention per (batch, query head, query row); the fast
// path is sdpaFast.
func (b *Backend) SDPA(q, k, v tensor.Tensor, scale float32, mask tensor.Mask) tensor.Tensor {
	args := []tensor.Tensor{q, k, v}
	if mask.Kind == tensor.MaskArray {
		args = append(args, mask.Array)
	}
	if !b.ok("SDPA", args...) {
		return empty
	}
	tq, tk, tv := q.(*T), k.(*T), v.(*T)
	if len(tq.shape) != 4 || len(tk.shape) != 4 || len(tv.shape) != 4 {
		return b.fail("SDPA", "want rank-4 q, k, v, got %v %v %v", tq.shape, tk.shape, tv.shape)
	}
	B, Hq, L, D := tq.shape[0], tq.shape[1], tq.shape[2], tq.shape[3]
	Hk, S, Dv := tk.shape[1], tk.shape[2], tv.shape[3]
	if tk.shape[0] != B || tv.shape[0] != B || tk.shape[3] != D || tv.shape[1] != Hk || tv.shape[2] != S || Hk == 0 || Hq%Hk != 0 {
		return b.fail("SDPA", "incompatible q %v, k %v, v %v", tq.shape, tk.shape, tv.shape)
	}
	var mb []bool
	var mf []float32
	var ms []int
	if mask.Kind == tensor.MaskArray {
		tm := mask.Array.(*T)
		full := []int{B, Hq, L, S}
		if _, err := broadcastShapes(tm.shape, full); err != nil || len(tm.shape) > 4 || tm.shape[len(tm.shape)-1] != S || tm.shape[len(tm.shape)-2] != L {
			return b.fail("SDPA", "mask %v does not fit scores %v", tm.shape, full)
		}
		ms = bstrides(tm.shape, full)
		if tm.dt == tensor.Bool {
			mb = tm.b
		} else {
			mf = asFloats(tm)
		}
	}
	fq, fk, fv := asFloats(tq), asFloats(tk), asFloats(tv)
	r := newF(B, Hq, L, Dv)
	if L == 1 {
		decodeReads.Add(int64(B*Hk*S*(D+Dv)) * 4)
	}
	if !b.opt.Plain {
		b.sdpaFast(&attnArgs{q: fq, k: fk, v: fv, B: B, Hq: Hq, Hk: Hk, L: L, S: S, D: D, Dv: Dv,
			scale: scale, causal: mask.Kind == tensor.MaskCausal, mb: mb, mf: mf, ms: ms}, r.f)
		return r
	}
	group := Hq / Hk
	b.pool.run(B*Hq*L, max(1, 2048/(S*D+1)), func(lo, hi int) {
		scores := make([]float32, S)
		for w := lo; w < hi; w++ {
			bi, h, l := w/(Hq*L), (w/L)%Hq, w%L
			kh := h / group
			qrow := fq[((bi*Hq+h)*L+l)*D:][:D]
			kbase := (bi*Hk + kh) * S * D
			vbase := (bi*Hk + kh) * S * Dv
			limit := S
			if mask.Kind == tensor.MaskCausal {
				limit = S - L + l + 1
			}
			for s := 0; s < S; s++ {
				if s >= limit {
					scores[s] = float32(math.Inf(-1))
					continue
				}
				krow := fk[kbase+s*D:][:D]
				var dot float32
				for c, qv := range qrow {
					dot += qv * scale * krow[c]
				}
				if ms != nil {
					mi := bi*ms[0] + h*ms[1] + l*ms[2] + s*ms[3]
					if mb != nil && !mb[mi] {
						dot = float32(math.Inf(-1))
					} else if mf != nil {
						dot += mf[mi]
					}
				}
				scores[s] = dot
			}
			softmaxLine(scores)
			out := r.f[((bi*Hq+h)*L+l)*Dv:][:Dv]
			for s, p := range scores {
				if p == 0 || p != p {
					if p != p {
						for c := range out {
							out[c] = p
						}
						break
					}
					continue
				}
				vrow := fv[vbase+s*Dv:][:Dv]
				for c := range out {
					out[c] += p * vrow[c]
				}
			}
		}
	})
	return r
}

func (b *Backend) Conv1D(x, w tensor.Tensor, stride, padding, groups int) tensor.Tensor {
	if !b.ok("Conv1D", x, w) {
		return empty
	}
	tx, tw := x.(*T), w.(*T)
	if len(tx.shape) != 3 || len(tw.shape) != 3 || stride < 1 || padding < 0 || groups < 1 {
		return b.fail("Conv1D", "x %v, w %v, stride %d, padding %d, groups %d", tx.shape, tw.shape, stride, padding, groups)
	}
	B, T, Cin := tx.shape[0], tx.shape[1], tx.shape[2]
	Cout, K, Cg := tw.shape[0], tw.shape[1], tw.shape[2]
	if Cin%groups != 0 || Cout%groups != 0 || Cg != Cin/groups {
		return b.fail("Conv1D", "channels: x %v, w %v, groups %d", tx.shape, tw.shape, groups)
	}
	To := (T+2*padding-K)/stride + 1
	if To < 0 {
		To = 0
	}
	fx, fw := asFloats(tx), asFloats(tw)
	r := newF(B, To, Cout)
	og := Cout / groups
	for bi := 0; bi < B; bi++ {
		for t := 0; t < To; t++ {
			for o := 0; o < Cout; o++ {
				g := o / og
				var s float32
				for kk := 0; kk < K; kk++ {
					ti := t*stride + kk - padding
					if ti < 0 || ti >= T {
						continue
					}
					xr := fx[(bi*T+ti)*Cin+g*Cg:][:Cg]
					wr := fw[(o*K+kk)*Cg:][:Cg]
					for c, xv := range xr {
						s += xv * wr[c]
					}
				}
				r.f[(bi*To+t)*Cout+o] = s
			}
		}
	}
	return r
}

func (b *Backend) Conv2D(x, w tensor.Tensor, strideH, strideW, padH, padW int) tensor.Tensor {
	if !b.ok("Conv2D", x, w) {
		return empty
	}
	tx, tw := x.(*T), w.(*T)
	if len(tx.shape) != 4 || len(tw.shape) != 4 || strideH < 1 || strideW < 1 || padH < 0 || padW < 0 || tw.shape[3] != tx.shape[3] {
		return b.fail("Conv2D", "x %v, w %v", tx.shape, tw.shape)
	}
	B, H, W, Cin := tx.shape[0], tx.shape[1], tx.shape[2], tx.shape[3]
	Cout, KH, KW := tw.shape[0], tw.shape[1], tw.shape[2]
	Ho, Wo := (H+2*padH-KH)/strideH+1, (W+2*padW-KW)/strideW+1
	if Ho < 0 {
		Ho = 0
	}
	if Wo < 0 {
		Wo = 0
	}
	fx, fw := asFloats(tx), asFloats(tw)
	r := newF(B, Ho, Wo, Cout)
	b.pool.run(B*Ho, 1, func(lo, hi int) {
		for w := lo; w < hi; w++ {
			bi, i := w/Ho, w%Ho
			for j := 0; j < Wo; j++ {
				out := r.f[((bi*Ho+i)*Wo+j)*Cout:][:Cout]
				for o := range out {
					var s float32
					for ki := 0; ki < KH; ki++ {
						y := i*strideH + ki - padH
						if y < 0 || y >= H {
							continue
						}
						for kj := 0; kj < KW; kj++ {
							xx := j*strideW + kj - padW
							if xx < 0 || xx >= W {
								continue
							}
							xr := fx[((bi*H+y)*W+xx)*Cin:][:Cin]
							wr := fw[((o*KH+ki)*KW+kj)*Cin:][:Cin]
							for c, xv := range xr {
								s += xv * wr[c]
							}
						}
					}
					out[o] = s
				}
			}
		}
	})
	return r
}
