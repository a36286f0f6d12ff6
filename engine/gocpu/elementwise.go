package gocpu

import (
	"fmt"
	"math"

	"perch/engine/tensor"
)

func broadcastShapes(a, b []int) ([]int, error) {
	n := max(len(a), len(b))
	out := make([]int, n)
	for i := 0; i < n; i++ {
		da, db := 1, 1
		if j := len(a) - n + i; j >= 0 {
			da = a[j]
		}
		if j := len(b) - n + i; j >= 0 {
			db = b[j]
		}
		switch {
		case da == db || db == 1:
			out[i] = da
		case da == 1:
			out[i] = db
		default:
			return nil, fmt.Errorf("shapes %v and %v do not broadcast", a, b)
		}
	}
	return out, nil
}

// bstrides are the strides of shape seen through out (0 on broadcast axes).
func bstrides(shape, out []int) []int {
	s := make([]int, len(out))
	st := strides(shape)
	off := len(out) - len(shape)
	for i := range shape {
		if shape[i] != 1 {
			s[off+i] = st[i]
		}
	}
	return s
}

// bindex calls fn(k, ia, ib) for every output index k with the matching
// input indices, taking fast paths for the common layouts.
func bindex(as, bs, out []int, fn func(k, ia, ib int)) {
	n := numel(out)
	na, nb := numel(as), numel(bs)
	switch {
	case na == n && nb == n:
		for k := 0; k < n; k++ {
			fn(k, k, k)
		}
		return
	case nb == 1 && na == n:
		for k := 0; k < n; k++ {
			fn(k, k, 0)
		}
		return
	case na == 1 && nb == n:
		for k := 0; k < n; k++ {
			fn(k, 0, k)
		}
		return
	case na == n && isSuffix(bs, out):
		for k := 0; k < n; k++ {
			fn(k, k, k%nb)
		}
		return
	case nb == n && isSuffix(as, out):
		for k := 0; k < n; k++ {
			fn(k, k%na, k)
		}
		return
	}
	sa, sb := bstrides(as, out), bstrides(bs, out)
	idx := make([]int, len(out))
	ia, ib := 0, 0
	for k := 0; k < n; k++ {
		fn(k, ia, ib)
		for d := len(out) - 1; d >= 0; d-- {
			idx[d]++
			ia += sa[d]
			ib += sb[d]
			if idx[d] < out[d] {
				break
			}
			ia -= sa[d] * out[d]
			ib -= sb[d] * out[d]
			idx[d] = 0
		}
	}
}

// isSuffix reports whether s (ignoring leading 1s) equals the tail of out.
func isSuffix(s, out []int) bool {
	for len(s) > 0 && s[0] == 1 {
		s = s[1:]
	}
	if len(s) > len(out) {
		return false
	}
	tail := out[len(out)-len(s):]
	for i := range s {
		if s[i] != tail[i] {
			return false
		}
	}
	return true
}

type floatFn func(a, b float32) float32
type intFn func(a, b int32) int32

func (b *Backend) arith(op string, x, y tensor.Tensor, ff floatFn, fi intFn) tensor.Tensor {
	return b.arithOp(op, 0, x, y, ff, fi)
}

// arithOp is arith with an operator code ('+', '-', '*', '/', 'M'
// maximum, 'm' minimum) that lets
// float32 tensors of the common layouts (same shape, scalar, trailing-axes
// broadcast) take tight, parallel loops instead of a call per element.
func (b *Backend) arithOp(op string, code byte, x, y tensor.Tensor, ff floatFn, fi intFn) tensor.Tensor {
	if !b.ok(op, x, y) {
		return empty
	}
	tx, ty := x.(*T), y.(*T)
	out, err := broadcastShapes(tx.shape, ty.shape)
	if err != nil {
		return b.fail(op, "%v", err)
	}
	if fi != nil && tx.dt == tensor.Int32 && ty.dt == tensor.Int32 {
		r := newI(out...)
		bindex(tx.shape, ty.shape, out, func(k, ia, ib int) { r.i[k] = fi(tx.i[ia], ty.i[ib]) })
		return r
	}
	fx, fy := asFloats(tx), asFloats(ty)
	r := newF(out...)
	if code != 0 && b.fastArith(code, fx, fy, tx.shape, ty.shape, out, r.f) {
		return r
	}
	bindex(tx.shape, ty.shape, out, func(k, ia, ib int) { r.f[k] = ff(fx[ia], fy[ib]) })
	return r
}

// fastArith handles dst = x op y when y repeats along the leading axes of x
// (same shape, a scalar, or a suffix such as a [D] weight over [L, D]), x
// is a scalar, or y matches x's last axis and broadcasts over some other
// (RoPE tables [1, N, 1, c] over [1, N, heads, c]); it reports false for
// other layouts. Every layout runs the same float32 operation per element
// as the general path: the bits are the same.
func (b *Backend) fastArith(code byte, x, y []float32, xs, ys, out []int, dst []float32) bool {
	n := len(dst)
	switch {
	case len(x) == n && (len(y) == n || len(y) == 1 || isSuffix(ys, out)):
	case len(x) == 1 && len(y) == n:
		// scalar op vector: only for the commutative ops, by swapping
		if code != '+' && code != '*' {
			return false
		}
		x, y = y, x
	case len(x) == n && len(ys) > 0 && len(out) > 1 && ys[len(ys)-1] == out[len(out)-1] && out[len(out)-1] >= 8:
		b.rowArith(code, x, y, ys, out, dst)
		return true
	default:
		return false
	}
	ny := len(y)
	if ny == 0 {
		return true
	}
	if ny == 1 { // a scalar: tight loops over contiguous ranges
		v := y[0]
		b.pool.run(n, 1<<15, func(lo, hi int) { arithScalar(code, x[lo:hi], v, dst[lo:hi]) })
		return true
	}
	if ny == n { // same shape: one flat range, split like the scalar case
		b.pool.run(n, 1<<15, func(lo, hi int) { arithVec(code, x[lo:hi], y[lo:hi], dst[lo:hi]) })
		return true
	}
	b.pool.run(n/ny, max(1, 1<<15/ny), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			arithVec(code, x[r*ny:(r+1)*ny], y, dst[r*ny:(r+1)*ny])
		}
	})
	return true
}

// rowArith is fastArith for y sharing out's last axis and broadcasting
// over others: one offset into y per output row of that axis.
func (b *Backend) rowArith(code byte, x, y []float32, ys, out []int, dst []float32) {
	inner := out[len(out)-1]
	lead := out[:len(out)-1]
	sy := bstrides(ys, out)[:len(lead)]
	b.pool.run(len(dst)/inner, max(1, 1<<15/inner), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			off, rem := 0, r
			for d := len(lead) - 1; d >= 0; d-- {
				off += rem % lead[d] * sy[d]
				rem /= lead[d]
			}
			arithVec(code, x[r*inner:(r+1)*inner], y[off:off+inner], dst[r*inner:(r+1)*inner])
		}
	})
}

// arithVec sets d[k] = x[k] op y[k] (len(d) == len(x) == len(y)); the
// bulk of +, -, * and / runs 8 lanes at a time where the CPU has AVX2,
// with the same bits.
func arithVec(code byte, x, y, d []float32) {
	x, d = x[:len(y)], d[:len(y)]
	n := arithVec8(code, x, y, d)
	x, y, d = x[n:], y[n:], d[n:]
	switch code {
	case '+':
		for k, v := range y {
			d[k] = x[k] + v
		}
	case '-':
		for k, v := range y {
			d[k] = x[k] - v
		}
	case '*':
		for k, v := range y {
			d[k] = x[k] * v
		}
	case '/':
		for k, v := range y {
			d[k] = x[k] / v
		}
	case 'M':
		for k, v := range y {
			d[k] = fmax(x[k], v)
		}
	case 'm':
		for k, v := range y {
			d[k] = fmin(x[k], v)
		}
	}
}

// arithScalar sets d[k] = x[k] op v (len(d) == len(x)); the bulk of +, -,
// * and / runs 8 lanes at a time where the CPU has AVX2, with the same
// bits.
func arithScalar(code byte, x []float32, v float32, d []float32) {
	d = d[:len(x)]
	n := arithScalar8(code, x, v, d)
	x, d = x[n:], d[n:]
	switch code {
	case '+':
		for k, a := range x {
			d[k] = a + v
		}
	case '-':
		for k, a := range x {
			d[k] = a - v
		}
	case '*':
		for k, a := range x {
			d[k] = a * v
		}
	case '/':
		for k, a := range x {
			d[k] = a / v
		}
	case 'M':
		for k, a := range x {
			d[k] = fmax(a, v)
		}
	case 'm':
		for k, a := range x {
			d[k] = fmin(a, v)
		}
	}
}

func (b *Backend) compare(op string, x, y tensor.Tensor, f func(a, b float32) bool) tensor.Tensor {
	if !b.ok(op, x, y) {
		return empty
	}
	tx, ty := x.(*T), y.(*T)
	out, err := broadcastShapes(tx.shape, ty.shape)
	if err != nil {
		return b.fail(op, "%v", err)
	}
	fx, fy := asFloats(tx), asFloats(ty)
	r := newB(out...)
	bindex(tx.shape, ty.shape, out, func(k, ia, ib int) { r.b[k] = f(fx[ia], fy[ib]) })
	return r
}

func (b *Backend) logical(op string, x, y tensor.Tensor, f func(a, b bool) bool) tensor.Tensor {
	if !b.ok(op, x, y) {
		return empty
	}
	tx, ty := x.(*T), y.(*T)
	if tx.dt != tensor.Bool || ty.dt != tensor.Bool {
		return b.fail(op, "needs bool tensors, got %v and %v", tx.dt, ty.dt)
	}
	out, err := broadcastShapes(tx.shape, ty.shape)
	if err != nil {
		return b.fail(op, "%v", err)
	}
	r := newB(out...)
	bindex(tx.shape, ty.shape, out, func(k, ia, ib int) { r.b[k] = f(tx.b[ia], ty.b[ib]) })
	return r
}

func (b *Backend) Add(x, y tensor.Tensor) tensor.Tensor {
	return b.arithOp("Add", '+', x, y, func(a, c float32) float32 { return a + c }, func(a, c int32) int32 { return a + c })
}
func (b *Backend) Sub(x, y tensor.Tensor) tensor.Tensor {
	return b.arithOp("Sub", '-', x, y, func(a, c float32) float32 { return a - c }, func(a, c int32) int32 { return a - c })
}
func (b *Backend) Mul(x, y tensor.Tensor) tensor.Tensor {
	return b.arithOp("Mul", '*', x, y, func(a, c float32) float32 { return a * c }, func(a, c int32) int32 { return a * c })
}
func (b *Backend) Div(x, y tensor.Tensor) tensor.Tensor {
	return b.arithOp("Div", '/', x, y, func(a, c float32) float32 { return a / c }, nil)
}
func (b *Backend) Maximum(x, y tensor.Tensor) tensor.Tensor {
	return b.arithOp("Maximum", 'M', x, y, fmax, func(a, c int32) int32 { return max(a, c) })
}
func (b *Backend) Minimum(x, y tensor.Tensor) tensor.Tensor {
	return b.arithOp("Minimum", 'm', x, y, fmin, func(a, c int32) int32 { return min(a, c) })
}
func (b *Backend) Pow(x, y tensor.Tensor) tensor.Tensor {
	return b.arith("Pow", x, y, func(a, c float32) float32 { return float32(math.Pow(float64(a), float64(c))) }, nil)
}
func (b *Backend) Equal(x, y tensor.Tensor) tensor.Tensor {
	return b.compare("Equal", x, y, func(a, c float32) bool { return a == c })
}
func (b *Backend) Less(x, y tensor.Tensor) tensor.Tensor {
	return b.compare("Less", x, y, func(a, c float32) bool { return a < c })
}
func (b *Backend) LogicalAnd(x, y tensor.Tensor) tensor.Tensor {
	return b.logical("LogicalAnd", x, y, func(a, c bool) bool { return a && c })
}
func (b *Backend) LogicalOr(x, y tensor.Tensor) tensor.Tensor {
	return b.logical("LogicalOr", x, y, func(a, c bool) bool { return a || c })
}

// fmax/fmin propagate NaN like MLX's maximum/minimum.
func fmax(a, c float32) float32 {
	if a != a || a > c {
		return a
	}
	return c
}

func fmin(a, c float32) float32 {
	if a != a || a < c {
		return a
	}
	return c
}

func (b *Backend) Where(cond, x, y tensor.Tensor) tensor.Tensor {
	if !b.ok("Where", cond, x, y) {
		return empty
	}
	tc, tx, ty := cond.(*T), x.(*T), y.(*T)
	if tc.dt != tensor.Bool {
		return b.fail("Where", "condition must be bool, is %v", tc.dt)
	}
	xy, err := broadcastShapes(tx.shape, ty.shape)
	if err == nil {
		xy, err = broadcastShapes(tc.shape, xy)
	}
	if err != nil {
		return b.fail("Where", "%v", err)
	}
	sc, sx, sy := bstrides(tc.shape, xy), bstrides(tx.shape, xy), bstrides(ty.shape, xy)
	n := numel(xy)
	idx := make([]int, len(xy))
	pick := func(yield func(k, ic, ix, iy int)) {
		ic, ix, iy := 0, 0, 0
		for k := 0; k < n; k++ {
			yield(k, ic, ix, iy)
			for d := len(xy) - 1; d >= 0; d-- {
				idx[d]++
				ic, ix, iy = ic+sc[d], ix+sx[d], iy+sy[d]
				if idx[d] < xy[d] {
					break
				}
				ic, ix, iy = ic-sc[d]*xy[d], ix-sx[d]*xy[d], iy-sy[d]*xy[d]
				idx[d] = 0
			}
		}
	}
	if tx.dt == tensor.Int32 && ty.dt == tensor.Int32 {
		r := newI(xy...)
		pick(func(k, ic, ix, iy int) {
			if tc.b[ic] {
				r.i[k] = tx.i[ix]
			} else {
				r.i[k] = ty.i[iy]
			}
		})
		return r
	}
	if tx.dt == tensor.Bool && ty.dt == tensor.Bool {
		r := newB(xy...)
		pick(func(k, ic, ix, iy int) {
			if tc.b[ic] {
				r.b[k] = tx.b[ix]
			} else {
				r.b[k] = ty.b[iy]
			}
		})
		return r
	}
	fx, fy := asFloats(tx), asFloats(ty)
	r := newF(xy...)
	// Each operand whole or a single value (a grammar's mask over the
	// vocabulary against -inf): index k itself, without the walk.
	if sc, ok := flatStep(tc, n); ok {
		if sx, ok := flatStep(tx, n); ok {
			if sy, ok := flatStep(ty, n); ok {
				for k := range r.f {
					if tc.b[k*sc] {
						r.f[k] = fx[k*sx]
					} else {
						r.f[k] = fy[k*sy]
					}
				}
				return r
			}
		}
	}
	pick(func(k, ic, ix, iy int) {
		if tc.b[ic] {
			r.f[k] = fx[ix]
		} else {
			r.f[k] = fy[iy]
		}
	})
	return r
}

// flatStep is how an operand's index follows the output's flat index k
// when it broadcasts to n elements: 1 when it holds all n (its dimensions
// are then the output's, in order), 0 when it holds one value.
func flatStep(t *T, n int) (int, bool) {
	switch numel(t.shape) {
	case n:
		return 1, true
	case 1:
		return 0, true
	}
	return 0, false
}

func (b *Backend) unary(op string, x tensor.Tensor, f func(float32) float32) tensor.Tensor {
	if !b.ok(op, x) {
		return empty
	}
	tx := x.(*T)
	in := asFloats(tx)
	r := newF(tx.shape...)
	b.pool.run(len(in), 1<<14, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			r.f[k] = f(in[k])
		}
	})
	return r
}

func f64(f func(float64) float64) func(float32) float32 {
	return func(x float32) float32 { return float32(f(float64(x))) }
}

// Tanh: the plain path rounds float64 math.Tanh; the fast one is float32
// (kern.tanh, a few ulps from it).
func (b *Backend) Tanh(x tensor.Tensor) tensor.Tensor {
	if b.opt.Plain {
		return b.unary("Tanh", x, f64(math.Tanh))
	}
	return b.unaryVec("Tanh", x, func(v []float32) { kern.tanh(v) })
}
func (b *Backend) Exp(x tensor.Tensor) tensor.Tensor  { return b.unary("Exp", x, f64(math.Exp)) }
func (b *Backend) Log(x tensor.Tensor) tensor.Tensor  { return b.unary("Log", x, f64(math.Log)) }
func (b *Backend) Sin(x tensor.Tensor) tensor.Tensor  { return b.unary("Sin", x, f64(math.Sin)) }
func (b *Backend) Cos(x tensor.Tensor) tensor.Tensor  { return b.unary("Cos", x, f64(math.Cos)) }
func (b *Backend) Sqrt(x tensor.Tensor) tensor.Tensor { return b.unary("Sqrt", x, f64(math.Sqrt)) }
func (b *Backend) Rsqrt(x tensor.Tensor) tensor.Tensor {
	return b.unary("Rsqrt", x, func(v float32) float32 { return float32(1 / math.Sqrt(float64(v))) })
}
func (b *Backend) Sigmoid(x tensor.Tensor) tensor.Tensor {
	return b.unary("Sigmoid", x, func(v float32) float32 { return float32(1 / (1 + math.Exp(-float64(v)))) })
}
func (b *Backend) Softplus(x tensor.Tensor) tensor.Tensor {
	return b.unary("Softplus", x, func(v float32) float32 {
		f := float64(v)
		return float32(math.Max(f, 0) + math.Log1p(math.Exp(-math.Abs(f))))
	})
}

// GeluTanh in float32, in the reference's order (the fast path's tanh
// from kern.tanh).
func (b *Backend) GeluTanh(x tensor.Tensor) tensor.Tensor {
	if b.opt.Plain {
		return b.unary("GeluTanh", x, geluTanh)
	}
	return b.unaryVec("GeluTanh", x, geluTanhVec)
}

// geluTanhVec is geluTanh over v in place, 256 values at a time.
func geluTanhVec(v []float32) {
	var in [256]float32
	for k0 := 0; k0 < len(v); k0 += len(in) {
		blk := v[k0:min(k0+len(in), len(v))]
		t := in[:len(blk)]
		for i, x := range blk {
			t[i] = float32(sqrt2OverPi) * (x + 0.044715*x*x*x)
		}
		kern.tanh(t)
		for i, x := range blk {
			blk[i] = 0.5 * x * (1 + t[i])
		}
	}
}

// unaryVec is unary with f applied in place to ranges of a copy of x.
func (b *Backend) unaryVec(op string, x tensor.Tensor, f func([]float32)) tensor.Tensor {
	if !b.ok(op, x) {
		return empty
	}
	tx := x.(*T)
	r := newF(tx.shape...)
	var src []float32
	if tx.h == nil {
		src = asFloats(tx)
	}
	b.pool.run(len(r.f), 1<<14, func(lo, hi int) { // each range copied, then f
		if src == nil {
			widen(r.f[lo:hi], tx.h[lo:hi], tx.f16)
		} else {
			copy(r.f[lo:hi], src[lo:hi])
		}
		f(r.f[lo:hi])
	})
	return r
}

const sqrt2OverPi = 0.7978845608028654

func geluTanh(v float32) float32 {
	inner := float32(sqrt2OverPi) * (v + 0.044715*v*v*v)
	return 0.5 * v * (1 + float32(math.Tanh(float64(inner))))
}

func (b *Backend) AsType(x tensor.Tensor, dt tensor.DType) tensor.Tensor {
	if !b.ok("AsType", x) {
		return empty
	}
	tx := x.(*T)
	switch {
	case dt.IsFloat():
		if tx.dt == tensor.Float32 {
			return tx // the Go backend computes every float type in float32
		}
		r := newF(tx.shape...)
		copy(r.f, asFloats(tx))
		return r
	case dt == tensor.Int32:
		r := newI(tx.shape...)
		for k, v := range asFloats(tx) {
			r.i[k] = int32(v)
		}
		return r
	case dt == tensor.Bool:
		r := newB(tx.shape...)
		for k, v := range asFloats(tx) {
			r.b[k] = v != 0
		}
		return r
	}
	return b.fail("AsType", "cannot convert %v to %v", tx.dt, dt)
}
