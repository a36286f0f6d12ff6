package gocpu

// Reductions along a contiguous last axis, the per-token path's: the
// finite check's sum and greedy sampling's argmax over a vocabulary's
// logits (262,144 values). They read the row as a slice, not value by
// value through a closure, and split one long row across the workers.

// rowSplit is the row length from which one row is split across workers.
const rowSplit = 1 << 15

// sumRow is Σ x with eight running sums (lane i takes x[i], x[i+8], …),
// added pairwise at the end: no longer the strict left-to-right order,
// and no less accurate than it. AVX2 takes the sums 8 lanes at a time.
func sumRow(x []float32) float32 {
	var a [8]float32
	n := len(x) &^ 7
	for j := sumRow8(x, &a); j < n; j += 8 {
		v := x[j : j+8 : j+8]
		a[0] += v[0]
		a[1] += v[1]
		a[2] += v[2]
		a[3] += v[3]
		a[4] += v[4]
		a[5] += v[5]
		a[6] += v[6]
		a[7] += v[7]
	}
	for j := n; j < len(x); j++ {
		a[j-n] += x[j]
	}
	return ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]))
}

// argmaxRow is the first index of the largest value; the first NaN wins
// over every number (Argmax's rule). AVX2 takes a row without NaN.
func argmaxRow(x []float32) int {
	if j, ok := argmaxRow8(x); ok {
		return j
	}
	best, bi := float32(0), -1
	for j, v := range x {
		if bi < 0 || v > best || v != v && best == best {
			best, bi = v, j
		}
	}
	return max(bi, 0)
}

// rowsSum sums each row of length n; a single long row is cut into a
// part per worker whose sums are added in order.
func (b *Backend) rowsSum(in []float32, n int, out []float32) {
	rows := len(out)
	if rows == 1 && n >= rowSplit && b.pool.n > 1 {
		parts := rowParts(b.pool, n, func(a, z int) float32 { return sumRow(in[a:z]) })
		s := parts[0]
		for _, v := range parts[1:] {
			s += v
		}
		out[0] = s
		return
	}
	b.pool.run(rows, max(1, rowSplit/max(n, 1)), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			out[r] = sumRow(in[r*n : (r+1)*n])
		}
	})
}

// rowsArgmax is argmaxRow of each row, a single long row split as
// rowsSum splits it; the parts' winners compete in order, so the first
// index of the largest value still wins.
func (b *Backend) rowsArgmax(in []float32, n int, out []int32) {
	rows := len(out)
	if rows == 1 && n >= rowSplit && b.pool.n > 1 {
		parts := rowParts(b.pool, n, func(a, z int) int {
			if a == z {
				return -1
			}
			return a + argmaxRow(in[a:z])
		})
		bi := parts[0]
		for _, j := range parts[1:] {
			if j < 0 {
				continue
			}
			if v, best := in[j], in[bi]; v > best || v != v && best == best {
				bi = j
			}
		}
		out[0] = int32(bi)
		return
	}
	b.pool.run(rows, max(1, rowSplit/max(n, 1)), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			out[r] = int32(argmaxRow(in[r*n : (r+1)*n]))
		}
	})
}

// rowParts cuts one row of length n into a part per worker and returns f
// of each part [a, z), in order (a part past the row's end is empty).
func rowParts[T any](p *pool, n int, f func(a, z int) T) []T {
	parts := make([]T, p.n)
	step := (n + p.n - 1) / p.n
	p.run(p.n, 1, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			parts[i] = f(min(i*step, n), min((i+1)*step, n))
		}
	})
	return parts
}
