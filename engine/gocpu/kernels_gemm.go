package gocpu

// GEMM drivers around kern.gemm, the 6×16 register-blocked kernel
// c[6][16] = A[6 rows, k] · B[k, 16 columns].
//
// Linear (y = x·Wᵀ): A is 6 weight rows (dequantized once per call into a
// per-worker buffer, or read in place when dense), B is xᵀ packed as
// [⌈L/16⌉][K][16] (zero-padded), so each weight tile meets every input row
// from cache. K is split into blocks that keep the packed x in L2 while the
// workers sweep the weight tiles.
//
// MatMul (C = A·B): A rows read in place, B read in place by 16-column
// tiles (a ragged last tile is packed).

// gemmLinear computes y [L, Out] = x [L, In] · W[e]ᵀ.
func (b *Backend) gemmLinear(w *weight, e int, x []float32, L int, y []float32) {
	K, Out := w.in, w.out
	nt := (L + 15) / 16
	xt := packXT(x, L, K, w.l.Bits == 4)
	kc := w.blockK(nt)
	tiles := (Out + 5) / 6
	bufs := make([][]float32, b.pool.n)
	for kb := 0; kb < K; kb += kc {
		kn := min(kc, K-kb)
		b.pool.each(tiles, max(1, tiles/(8*b.pool.n)), func(worker, lo, hi int) {
			if bufs[worker] == nil {
				bufs[worker] = make([]float32, 6*kc)
			}
			buf := bufs[worker]
			var a [6][]float32
			var c [96]float32
			for t := lo; t < hi; t++ {
				o0 := 6 * t
				n := min(6, Out-o0)
				for i := 0; i < n; i++ {
					a[i] = w.segment(e, o0+i, kb, kn, buf[min(i*kc, len(buf)):])
				}
				for i := n; i < 6; i++ {
					a[i] = a[n-1]
				}
				for j := 0; j < nt; j++ {
					cols := min(16, L-16*j)
					kern.gemm(&a, xt[(j*K+kb)*16:], 16, kn, widthFor(cols), &c)
					for i := 0; i < n; i++ {
						for jj := 0; jj < cols; jj++ {
							yo := &y[(16*j+jj)*Out+o0+i]
							if kb == 0 {
								*yo = c[16*i+jj]
							} else {
								*yo += c[16*i+jj]
							}
						}
					}
				}
			}
		})
	}
}

// widthFor is the kernel width (8 or 16) that covers cols columns.
func widthFor(cols int) int {
	if cols <= 8 {
		return 8
	}
	return 16
}

// blockK is the K block for nt packed x tiles: about 512 KiB of x, a
// multiple of the dequantization unit (64 values for 4-bit, and a group).
func (w *weight) blockK(nt int) int {
	unit := 8
	if w.l.Bits != 0 {
		unit = w.l.GroupSize
		if w.l.Bits == 4 {
			unit = max(64, unit)
		}
	}
	kc := (512 << 10) / (4 * 16 * nt)
	kc = max(unit, kc/unit*unit)
	return min(kc, w.in)
}

// segment returns weight row o of expert e over inputs [kb, kb+kn), in
// place when dense, else dequantized into buf (4-bit: permuteQ4's order).
func (w *weight) segment(e, o, kb, kn int, buf []float32) []float32 {
	row := e*w.out + o
	if w.dense != nil {
		copy(buf[:kn], w.dense[row*w.in+kb:][:kn])
		return buf[:kn]
	}
	gs := w.l.GroupSize
	words := w.packed[row*w.words:][:w.words]
	s := w.scales[row*w.groups+kb/gs:][:(kn+gs-1)/gs]
	bi := w.biases[row*w.groups+kb/gs:][:(kn+gs-1)/gs]
	if w.l.Bits == 4 {
		kern.deq4(words[kb/8:(kb+kn)/8], s, bi, buf[:kn], gs)
	} else {
		kern.deq8(words[kb/4:(kb+kn)/4], s, bi, buf[:kn], gs)
	}
	return buf[:kn]
}

// packXT packs x [L, K] transposed into [⌈L/16⌉][K][16], zero-padded; with
// permute, K runs in permuteQ4's order (unscaled) to match deq4.
func packXT(x []float32, L, K int, permute bool) []float32 {
	nt := (L + 15) / 16
	xt := make([]float32, nt*K*16)
	for r := 0; r < L; r++ {
		dst := xt[(r/16)*K*16+r%16:]
		src := x[r*K : (r+1)*K]
		if !permute {
			for k, v := range src {
				dst[16*k] = v
			}
			continue
		}
		for j := 0; j < K; j += 64 {
			for i := 0; i < 8; i++ {
				for k := 0; k < 8; k++ {
					dst[16*(j+8*k+i)] = src[j+8*i+k]
				}
			}
		}
	}
	return xt
}

// matmulJob is one batch element of MatMul: offsets of A, B and C.
type matmulJob struct{ ia, ib, ir int }

// matmulFast computes C [m, n] = A [m, k] · B [k, n] for every job, in
// tasks of up to 48 rows of one job.
func (b *Backend) matmulFast(fa, fb []float32, jobs []matmulJob, m, k, n int, out []float32) {
	if m == 0 || n == 0 {
		return
	}
	full := n / 16
	var tails [][]float32 // per job: the last n%16 columns of B, packed [k][16]
	if n%16 != 0 {
		tails = make([][]float32, len(jobs))
		for ji, j := range jobs {
			t := make([]float32, k*16)
			for p := 0; p < k; p++ {
				copy(t[16*p:], fb[j.ib+p*n+16*full:j.ib+(p+1)*n])
			}
			tails[ji] = t
		}
	}
	const rowsPerTask = 48
	mt := (m + rowsPerTask - 1) / rowsPerTask
	b.pool.each(len(jobs)*mt, 1, func(_, lo, hi int) {
		var a [6][]float32
		var c [96]float32
		for task := lo; task < hi; task++ {
			ji, r0 := task/mt, task%mt*rowsPerTask
			j := jobs[ji]
			r1 := min(r0+rowsPerTask, m)
			for ct := 0; ct*16 < n; ct++ {
				cols := min(16, n-16*ct)
				bt, ldb := fb[j.ib+16*ct:], n
				if cols < 16 {
					bt, ldb = tails[ji], 16
				}
				for i0 := r0; i0 < r1; i0 += 6 {
					rows := min(6, r1-i0)
					for i := 0; i < 6; i++ {
						a[i] = fa[j.ia+min(i0+i, i0+rows-1)*k:][:k]
					}
					kern.gemm(&a, bt, ldb, k, widthFor(cols), &c)
					for i := 0; i < rows; i++ {
						copy(out[j.ir+(i0+i)*n+16*ct:][:cols], c[16*i:16*i+cols])
					}
				}
			}
		}
	})
}
