package gocpu

// GEMM drivers around kern.gemm, the register-blocked kernel
// c[6][nr] = A[6 rows, k] · B[k, nr columns] (nr = kern.nr, 16 or 32).
//
// Linear (y = x·Wᵀ): A is 6 weight rows, dequantized (or widened, when
// dense) into a per-worker buffer; B is a chunk of xᵀ packed as
// [⌈rows/nr⌉][K][nr] (zero-padded), so each weight tile meets the chunk's
// input rows from cache. K is split into blocks of about 2 MiB of the
// packed chunk (blockK) while the workers sweep the weight tiles.
//
// MatMul (C = A·B): A rows read in place, B read in place by nr-column
// tiles (a ragged last tile is packed).

// gemmLinear computes y [L, Out] = x [L, In] · W[e]ᵀ. Inputs go by chunks
// of gemmChunk(nr) rows, each packed once; per chunk and K block the
// workers sweep tiles of 6 weight rows, dequantized into a per-worker
// buffer, against every packed column tile. Results collect transposed in
// yᵀ [Out, L], so that each 6×nr block is stored (or added, past the first
// K block) as 6 contiguous runs; yᵀ is transposed into y at the end.
func (b *Backend) gemmLinear(w *weight, e int, x []float32, L int, y []float32) {
	K, Out, nr := w.in, w.out, kern.nr
	mc := gemmChunk(nr)
	kc := w.blockK(min(L, mc))
	tiles := (Out + 5) / 6
	yt := b.scratch.get(0, Out*L) // every value is set by the first K block
	bufs := make([][]float32, b.pool.n)
	xt := b.scratch.get(1, gemmChunk(nr)*K)
	for l0 := 0; l0 < L; l0 += mc {
		ml := min(mc, L-l0)
		nt := (ml + nr - 1) / nr
		xt = b.packXT(x[l0*K:(l0+ml)*K], ml, K, nr, w.l.Bits == 4, xt)
		for kb := 0; kb < K; kb += kc {
			kn := min(kc, K-kb)
			b.pool.each(tiles, max(1, tiles/(32*b.pool.n)), func(worker, lo, hi int) {
				if bufs[worker] == nil {
					bufs[worker] = make([]float32, 6*kc+2*(kc/max(w.l.GroupSize, 1)+1))
				}
				buf := bufs[worker]
				var a [6][]float32
				var c gemmOut
				for t := lo; t < hi; t++ {
					o0 := 6 * t
					n := min(6, Out-o0)
					for i := 0; i < n; i++ {
						a[i] = w.segment(e, o0+i, kb, kn, buf[i*kc:], buf[6*kc:])
					}
					for i := n; i < 6; i++ {
						a[i] = a[n-1]
					}
					for j := 0; j < nt; j++ {
						cols := min(nr, ml-nr*j)
						kern.gemm(&a, xt[(j*K+kb)*nr:], nr, kn, cols, &c)
						for i := 0; i < n; i++ {
							dst := yt[(o0+i)*L+l0+nr*j:][:cols]
							if kb == 0 {
								copy(dst, c[32*i:])
							} else {
								addTo(dst, c[32*i:])
							}
						}
					}
				}
			})
		}
	}
	b.transpose(yt, Out, L, y)
}

// gemmChunk is how many input rows gemmLinear packs at a time: 8 column
// tiles.
func gemmChunk(nr int) int { return 8 * nr }

// addTo adds src to dst (len(dst) values).
func addTo(dst, src []float32) {
	src = src[:len(dst)]
	for i := range dst {
		dst[i] += src[i]
	}
}

// transpose writes src [rows, cols] transposed into dst [cols, rows], in
// 32×32 blocks split across the workers, each moved as 8×8 squares whose
// eight rows are read and written as runs of 8 values (a ragged edge goes
// value by value). Within a block every destination row takes a run of
// 32: going a square at a time across a whole destination row instead
// would write 8-value pieces of rows a whole row apart, and with rows a
// multiple of 256 (768, 3072: tower widths) those all fall in the same
// cache set.
func (b *Backend) transpose(src []float32, rows, cols int, dst []float32) {
	const blk = 32
	rb := (rows + blk - 1) / blk
	b.pool.each(rb, 1, func(_, lo, hi int) {
		for r0 := lo * blk; r0 < min(hi*blk, rows); r0 += blk {
			r1 := min(r0+blk, rows)
			for c0 := 0; c0 < cols; c0 += blk {
				c1 := min(c0+blk, cols)
				for c := c0; c < c1; c += 8 {
					for r := r0; r < r1; r += 8 {
						if r+8 <= r1 && c+8 <= c1 {
							transpose8(src[r*cols+c:], cols, dst[c*rows+r:], rows)
							continue
						}
						for i := r; i < min(r+8, r1); i++ {
							for j := c; j < min(c+8, c1); j++ {
								dst[j*rows+i] = src[i*cols+j]
							}
						}
					}
				}
			}
		}
	})
}

// transpose8 writes the 8×8 square at src (row stride ls) transposed at
// dst (row stride ld).
func transpose8(src []float32, ls int, dst []float32, ld int) {
	if transpose8x8(src, ls, dst, ld) {
		return
	}
	s0, s1, s2, s3 := src[:8:8], src[ls:][:8:8], src[2*ls:][:8:8], src[3*ls:][:8:8]
	s4, s5, s6, s7 := src[4*ls:][:8:8], src[5*ls:][:8:8], src[6*ls:][:8:8], src[7*ls:][:8:8]
	for j := 0; j < 8; j++ {
		d := dst[j*ld:][:8:8]
		d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7] = s0[j], s1[j], s2[j], s3[j], s4[j], s5[j], s6[j], s7[j]
	}
}

// blockK is the K block for rows packed input rows: about 2 MiB of them,
// a multiple of the dequantization unit (64 values for 4-bit, and a
// group). That is more than L2 holds, but the kernel's reads of the packed
// rows are sequential and cheap next to writing and re-adding partial sums
// (measured: E2B's projections over 256 positions ran ~10 % faster at
// 2 MiB than at 512 KiB, one K block for K ≤ 4096).
func (w *weight) blockK(rows int) int {
	unit := 8
	if w.l.Bits != 0 {
		unit = w.l.GroupSize
		if w.l.Bits == 4 {
			unit = max(64, unit)
		}
	}
	cols := (rows + kern.nr - 1) / kern.nr * kern.nr
	kc := (2 << 20) / (4 * cols)
	kc = max(unit, kc/unit*unit)
	return min(kc, w.in)
}

// segment returns weight row o of expert e over inputs [kb, kb+kn),
// copied (or widened) when dense, else dequantized into buf (4-bit:
// permuteQ4's order); 2-byte scales are widened into sbuf.
func (w *weight) segment(e, o, kb, kn int, buf, sbuf []float32) []float32 {
	row := e*w.out + o
	switch {
	case w.dense != nil:
		copy(buf[:kn], w.dense[row*w.in+kb:][:kn])
		return buf[:kn]
	case w.denseH != nil:
		widen(buf[:kn], w.denseH[row*w.in+kb:], w.f16)
		return buf[:kn]
	}
	gs := w.l.GroupSize
	words := w.packed[row*w.words:][:w.words]
	g0, ng := row*w.groups+kb/gs, (kn+gs-1)/gs
	s, bi := w.affine(g0, g0+ng, sbuf[:ng:ng], sbuf[ng:])
	if w.l.Bits == 4 {
		kern.deq4(words[kb/8:(kb+kn)/8], s, bi, buf[:kn], gs)
	} else {
		kern.deq8(words[kb/4:(kb+kn)/4], s, bi, buf[:kn], gs)
	}
	return buf[:kn]
}

// packXT packs x [L, K] transposed into [⌈L/nr⌉][K][nr], zero-padded,
// reusing buf when it is large enough; with permute, K runs in deq4's
// order (permuteQ4 with 8 lanes, unscaled). Writes are sequential; each
// tile's reads walk nr rows together.
func (b *Backend) packXT(x []float32, L, K, nr int, permute bool, buf []float32) []float32 {
	nt := (L + nr - 1) / nr
	xt := buf
	if cap(xt) < nt*K*nr {
		xt = make([]float32, nt*K*nr)
	}
	xt = xt[:nt*K*nr]
	if L%nr != 0 {
		clear(xt[(nt-1)*K*nr:])
	}
	b.pool.run(nt, 1, func(lo, hi int) { packTiles(x, L, K, nr, permute, xt, lo, hi) })
	return xt
}

// packTiles packs column tiles [lo, hi) of packXT.
func packTiles(x []float32, L, K, nr int, permute bool, xt []float32, lo, hi int) {
	for t := lo; t < hi; t++ {
		rows := min(nr, L-t*nr)
		xs := x[t*nr*K:]
		for k := 0; k < K; k++ {
			src := k
			if permute { // K%64 == 0; k = 64j+8kk+i holds x[64j+8i+kk]
				src = k&^63 + 8*(k&7) + (k>>3)&7
			}
			dst := xt[(t*K+k)*nr:][:rows]
			for j := range dst {
				dst[j] = xs[j*K+src]
			}
		}
	}
}

// matmulJob is one batch element of MatMul: offsets of A, B and C.
type matmulJob struct{ ia, ib, ir int }

// matmulFast computes C [m, n] = A [m, k] · B [k, n] for every job, in
// tasks of up to 48 rows of one job.
func (b *Backend) matmulFast(fa, fb []float32, jobs []matmulJob, m, k, n int, out []float32) {
	if m == 0 || n == 0 {
		return
	}
	nr := kern.nr
	full := n / nr
	var tails [][]float32 // per job: the last n%nr columns of B, packed [k][nr]
	if n%nr != 0 {
		tails = make([][]float32, len(jobs))
		for ji, j := range jobs {
			t := make([]float32, k*nr)
			for p := 0; p < k; p++ {
				copy(t[nr*p:], fb[j.ib+p*n+nr*full:j.ib+(p+1)*n])
			}
			tails[ji] = t
		}
	}
	const rowsPerTask = 48
	mt := (m + rowsPerTask - 1) / rowsPerTask
	b.pool.each(len(jobs)*mt, 1, func(_, lo, hi int) {
		var a [6][]float32
		var c gemmOut
		for task := lo; task < hi; task++ {
			ji, r0 := task/mt, task%mt*rowsPerTask
			j := jobs[ji]
			r1 := min(r0+rowsPerTask, m)
			for ct := 0; ct*nr < n; ct++ {
				cols := min(nr, n-nr*ct)
				bt, ldb := fb[j.ib+nr*ct:], n
				if cols < nr {
					bt, ldb = tails[ji], nr
				}
				gemmRows(&a, &c, fa[j.ia:], k, r0, r1, bt, ldb, cols, out[j.ir+nr*ct:], n)
			}
		}
	})
}

// gemmRows sets out[i·ldo+j] = Σ_p a[i·k+p]·b[p·ldb+j] for rows
// [r0, r1) of A and j < cols, six rows of A per kernel call; rowsA and c
// are the caller's scratch (one per worker, so the hot loop allocates
// nothing).
func gemmRows(rowsA *[6][]float32, c *gemmOut, a []float32, k, r0, r1 int, b []float32, ldb, cols int, out []float32, ldo int) {
	for i0 := r0; i0 < r1; i0 += 6 {
		rows := min(6, r1-i0)
		for i := 0; i < 6; i++ {
			rowsA[i] = a[min(i0+i, i0+rows-1)*k:][:k]
		}
		kern.gemm(rowsA, b, ldb, k, cols, c)
		for i := 0; i < rows; i++ {
			copy(out[(i0+i)*ldo:][:cols], c[32*i:32*i+cols])
		}
	}
}

// scratch holds a backend's reusable float buffers (the backend runs one
// op at a time), so that large temporaries are neither allocated nor
// zeroed per call; callers must set every value they read.
type scratch struct{ bufs [2][]float32 }

// get returns buffer i with n values (contents undefined).
func (s *scratch) get(i, n int) []float32 {
	if cap(s.bufs[i]) < n {
		s.bufs[i] = make([]float32, n)
	}
	return s.bufs[i][:n]
}
