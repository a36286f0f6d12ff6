package gocpu

// Fast Linear, y [rows, Out] = x [rows, In] · W[e]ᵀ, by the number of rows:
//   - rows ≤ matvecMaxRows (decode): matvec. Quantized rows are never
//     dequantized: per group Σ(q·s+b)·x = s·Σq·x + b·Σx. Weight rows are
//     split across the workers; with several input rows each worker walks
//     its rows in cache-sized tiles, so weights stream from memory once.
//     With Options.IntDecode, 4-bit rows with bfloat16 scales meet x
//     quantized to int8 instead (intdot.go).
//   - more rows (prefill): GEMM (kernels_gemm.go), or for 4-bit weights,
//     with Options.IntPrefill, the integer GEMM of int8 activations (intgemm.go).
// Layouts the kernels do not cover (4-bit In%64 != 0, odd group sizes) use
// linearGeneric.

// matvecMaxRows is the most input rows that go through the matvec kernels
// (measured here: the GEMM path costs about as much as 7-10 matvecs until
// its 16/32-row tile fills).
const matvecMaxRows = 7

func (b *Backend) linearFast(w *weight, x []float32, rows int, y []float32) {
	b.linearRows(w, 0, x, rows, y)
}

// linearRows computes y [rows, Out] = x [rows, In] · W[e]ᵀ (no bias).
func (b *Backend) linearRows(w *weight, e int, x []float32, rows int, y []float32) {
	switch {
	case !w.fastLayout():
		b.linearGeneric(w, e, x, rows, y)
	case rows <= matvecMaxRows && b.opt.IntDecode && w.intDecodeLayout():
		b.matvecInt(w, e, x, rows, y)
	case rows <= matvecMaxRows:
		b.matvec(w, e, x, rows, y)
	case b.opt.IntPrefill && w.intLayout():
		b.gemmLinearInt(w, e, x, rows, y)
	default:
		b.gemmLinear(w, e, x, rows, y)
	}
}

// fastLayout reports whether the kernels cover w's quantization layout.
func (w *weight) fastLayout() bool {
	gs := w.l.GroupSize
	switch w.l.Bits {
	case 0:
		return true
	case 4:
		return w.in%64 == 0 && gs >= 32 && gs&(gs-1) == 0
	case 8:
		return gs%32 == 0
	}
	return false
}

// rowBlock is expert e's weight rows [lo, hi): packed words with their scales
// and biases (2-byte ones widened into buf, 2·(hi-lo)·groups values, or,
// with buf nil, left as they are), or dense values (float32 or 2-byte).
type rowBlock struct {
	packed []uint32
	s, bi  []float32
	sH, bH []uint16 // bfloat16 scales and biases, when buf is nil
	dense  []float32
	denseH []uint16
	f16    bool
}

func (w *weight) expert(e, lo, hi int, buf []float32) rowBlock {
	lo, hi = e*w.out+lo, e*w.out+hi
	r := rowBlock{f16: w.f16}
	switch {
	case w.dense != nil:
		r.dense = w.dense[lo*w.in : hi*w.in]
	case w.denseH != nil:
		r.denseH = w.denseH[lo*w.in : hi*w.in]
	default:
		ng := (hi - lo) * w.groups
		r.packed = w.packed[lo*w.words : hi*w.words]
		if w.scalesH != nil && buf == nil {
			r.sH, r.bH = w.scalesH[lo*w.groups:hi*w.groups], w.biasesH[lo*w.groups:hi*w.groups]
			return r
		}
		var s, b []float32
		if buf != nil {
			s, b = buf[:ng:ng], buf[ng:]
		}
		r.s, r.bi = w.affine(lo*w.groups, hi*w.groups, s, b)
	}
	return r
}

// matvecSub is how many weight rows a one-row matvec takes per kernel call
// when their scales are widened first (so that those stay in L1).
const matvecSub = 32

// matvec: every input row against weight rows split across the workers.
func (b *Backend) matvec(w *weight, e int, x []float32, rows int, y []float32) {
	K, Out, gs := w.in, w.out, w.l.GroupSize
	// Per input row: the x the kernel reads and, when quantized, group sums.
	xk, xs := x, []float32(nil)
	if w.quantized() {
		xs = make([]float32, rows*w.groups)
		for r := 0; r < rows; r++ {
			groupSums(x[r*K:(r+1)*K], xs[r*w.groups:(r+1)*w.groups], gs)
		}
		if w.l.Bits == 4 {
			xk = make([]float32, rows*K)
			for r := 0; r < rows; r++ {
				kern.prepQ4(x[r*K:(r+1)*K], xk[r*K:(r+1)*K])
			}
		}
	}
	rowBytes := w.words * 4
	switch {
	case w.dense != nil:
		rowBytes = K * 4
	case w.denseH != nil:
		rowBytes = K * 2
	}
	// One input row: chunks only balance the workers. Several: tiles of
	// ~128 KiB of weights, read from memory once and from cache per row.
	chunk := max(16, Out/(8*b.pool.n))
	sub := matvecSub
	if rows > 1 {
		chunk = max(8, (128<<10)/rowBytes)
		sub = chunk
	}
	var scratch [][]float32 // per worker: widened scales and biases (f16)
	if w.scalesH != nil && w.f16 {
		scratch = make([][]float32, b.pool.n)
	} else {
		sub = chunk
	}
	b.pool.each(Out, chunk, func(worker, lo, hi int) {
		var buf []float32
		if scratch != nil {
			if scratch[worker] == nil {
				scratch[worker] = make([]float32, 2*min(sub, Out)*w.groups)
			}
			buf = scratch[worker]
		}
		for r0 := lo; r0 < hi; r0 += sub {
			r1 := min(r0+sub, hi)
			wr := w.expert(e, r0, r1, buf)
			for r := 0; r < rows; r++ {
				xr, yr := xk[r*K:(r+1)*K], y[r*Out+r0:r*Out+r1]
				switch {
				case wr.sH != nil && w.l.Bits == 4:
					kern.q4dotH(wr.packed, wr.sH, wr.bH, xr, xs[r*w.groups:(r+1)*w.groups], yr, gs)
				case wr.sH != nil:
					kern.q8dotH(wr.packed, wr.sH, wr.bH, xr, xs[r*w.groups:(r+1)*w.groups], yr, gs)
				case w.l.Bits == 4:
					kern.q4dot(wr.packed, wr.s, wr.bi, xr, xs[r*w.groups:(r+1)*w.groups], yr, gs)
				case w.l.Bits == 8:
					kern.q8dot(wr.packed, wr.s, wr.bi, xr, xs[r*w.groups:(r+1)*w.groups], yr, gs)
				case wr.denseH != nil && wr.f16:
					kern.dotF16(wr.denseH, xr, yr)
				case wr.denseH != nil:
					kern.dotBF16(wr.denseH, xr, yr)
				default:
					kern.dot(wr.dense, xr, yr)
				}
			}
		}
	})
}

// gatherLinear computes y [N·K, Out] for GatherLinear: pair p = n·K+j
// applies expert ids[p] to input row n·kx + min(j, kx-1). Pairs are grouped
// by expert so that each expert's weights are read once for all its rows.
func (b *Backend) gatherLinear(w *weight, ids []int, x []float32, K, kx int, y []float32) {
	byExpert := make([][]int, w.experts)
	for p, e := range ids {
		byExpert[e] = append(byExpert[e], p)
	}
	for e, ps := range byExpert {
		if len(ps) == 0 {
			continue
		}
		xe := make([]float32, len(ps)*w.in)
		for i, p := range ps {
			n, j := p/K, p%K
			copy(xe[i*w.in:(i+1)*w.in], x[(n*kx+min(j, kx-1))*w.in:])
		}
		ye := make([]float32, len(ps)*w.out)
		b.linearRows(w, e, xe, len(ps), ye)
		for i, p := range ps {
			copy(y[p*w.out:(p+1)*w.out], ye[i*w.out:])
		}
	}
}

// linearGeneric covers layouts the kernels do not: matvec row by row, or
// tiles of 8 dequantized weight rows against every input row.
func (b *Backend) linearGeneric(w *weight, e int, x []float32, rows int, y []float32) {
	if rows == 1 {
		b.pool.run(w.out, 64, func(lo, hi int) {
			buf := make([]float32, w.in)
			for o := lo; o < hi; o++ {
				w.row(e, o, buf)
				y[o] = dot(x, buf)
			}
		})
		return
	}
	const tile = 8
	tiles := (w.out + tile - 1) / tile
	b.pool.run(tiles, 1, func(lo, hi int) {
		buf := make([]float32, tile*w.in)
		for t := lo; t < hi; t++ {
			o0 := t * tile
			n := min(tile, w.out-o0)
			for i := 0; i < n; i++ {
				w.row(e, o0+i, buf[i*w.in:(i+1)*w.in])
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
