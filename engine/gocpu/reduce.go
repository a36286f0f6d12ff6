package gocpu

import (
	"math"
	"math/rand/v2"
	"sort"

	"perch/engine/tensor"
)

// reduce applies f to every [outer, n, inner] line along axis.
func (b *Backend) reduce(op string, x tensor.Tensor, axis int, keep bool, f func(line func(int) float32, n int) float32) tensor.Tensor {
	if !b.ok(op, x) {
		return empty
	}
	t := x.(*T)
	ax, err := normAxis(axis, len(t.shape))
	if err != nil {
		return b.fail(op, "%v", err)
	}
	in := asFloats(t)
	outer, n, inner := blocks(t.shape, ax)
	out := reducedShape(t.shape, ax, keep)
	r := newF(out...)
	for o := 0; o < outer; o++ {
		for i := 0; i < inner; i++ {
			base := o*n*inner + i
			r.f[o*inner+i] = f(func(j int) float32 { return in[base+j*inner] }, n)
		}
	}
	return r
}

// lastAxis serves the row reductions: when axis is x's last and x holds
// float32 values, it returns x's values, the row length and the result to fill
// (of type dt). Every other case, errors included, gets a nil result and
// goes to reduce.
func (b *Backend) lastAxis(x tensor.Tensor, axis int, keep bool, dt tensor.DType) ([]float32, int, *T) {
	t, isT := x.(*T)
	if b.err != nil || !isT || len(t.shape) == 0 || !t.dt.IsFloat() || t.h != nil || (axis != -1 && axis != len(t.shape)-1) {
		return nil, 0, nil
	}
	return t.f, t.shape[len(t.shape)-1], alloc(dt, reducedShape(t.shape, len(t.shape)-1, keep))
}

func reducedShape(shape []int, ax int, keep bool) []int {
	if keep {
		out := cloneShape(shape)
		out[ax] = 1
		return out
	}
	return append(cloneShape(shape[:ax]), shape[ax+1:]...)
}

func (b *Backend) Sum(x tensor.Tensor, axis int, keep bool) tensor.Tensor {
	if in, n, r := b.lastAxis(x, axis, keep, tensor.Float32); r != nil {
		b.rowsSum(in, n, r.f)
		return r
	}
	return b.reduce("Sum", x, axis, keep, func(line func(int) float32, n int) float32 {
		var s float32
		for j := 0; j < n; j++ {
			s += line(j)
		}
		return s
	})
}

func (b *Backend) Mean(x tensor.Tensor, axis int, keep bool) tensor.Tensor {
	return b.reduce("Mean", x, axis, keep, func(line func(int) float32, n int) float32 {
		var s float32
		for j := 0; j < n; j++ {
			s += line(j)
		}
		return s / float32(n)
	})
}

func (b *Backend) Max(x tensor.Tensor, axis int, keep bool) tensor.Tensor {
	return b.reduce("Max", x, axis, keep, func(line func(int) float32, n int) float32 {
		m := float32(math.Inf(-1))
		for j := 0; j < n; j++ {
			m = fmax(line(j), m)
		}
		return m
	})
}

func (b *Backend) LogSumExp(x tensor.Tensor, axis int, keep bool) tensor.Tensor {
	return b.reduce("LogSumExp", x, axis, keep, func(line func(int) float32, n int) float32 {
		m := math.Inf(-1)
		for j := 0; j < n; j++ {
			m = math.Max(m, float64(line(j)))
		}
		if math.IsInf(m, -1) {
			return float32(m)
		}
		var s float64
		for j := 0; j < n; j++ {
			s += math.Exp(float64(line(j)) - m)
		}
		return float32(m + math.Log(s))
	})
}

// Argmax returns the first index of the largest value.
func (b *Backend) Argmax(x tensor.Tensor, axis int) tensor.Tensor {
	if in, n, r := b.lastAxis(x, axis, false, tensor.Int32); r != nil {
		b.rowsArgmax(in, n, r.i)
		return r
	}
	r := b.reduce("Argmax", x, axis, false, func(line func(int) float32, n int) float32 {
		best, bi := float32(math.Inf(-1)), 0
		for j := 0; j < n; j++ {
			if v := line(j); v > best || v != v && best == best {
				best, bi = v, j
			}
		}
		return float32(bi)
	})
	return b.AsType(r, tensor.Int32)
}

// lines applies f to each line along axis with write access to the output line.
func (b *Backend) lines(op string, x tensor.Tensor, axis int, dt tensor.DType, f func(in []float32, out func(j int, v float32))) tensor.Tensor {
	if !b.ok(op, x) {
		return empty
	}
	t := x.(*T)
	ax, err := normAxis(axis, len(t.shape))
	if err != nil {
		return b.fail(op, "%v", err)
	}
	src := asFloats(t)
	outer, n, inner := blocks(t.shape, ax)
	r := alloc(dt, cloneShape(t.shape))
	buf := make([]float32, n)
	for o := 0; o < outer; o++ {
		for i := 0; i < inner; i++ {
			base := o*n*inner + i
			for j := 0; j < n; j++ {
				buf[j] = src[base+j*inner]
			}
			f(buf, func(j int, v float32) {
				if dt == tensor.Int32 {
					r.i[base+j*inner] = int32(v)
				} else {
					r.f[base+j*inner] = v
				}
			})
		}
	}
	return r
}

func (b *Backend) Softmax(x tensor.Tensor, axis int) tensor.Tensor {
	return b.lines("Softmax", x, axis, tensor.Float32, func(in []float32, out func(int, float32)) {
		softmaxLine(in)
		for j, v := range in {
			out(j, v)
		}
	})
}

// softmaxLine normalises in place in float32 (max-subtracted).
func softmaxLine(v []float32) {
	m := float32(math.Inf(-1))
	for _, x := range v {
		m = max(m, x)
	}
	if math.IsInf(float64(m), -1) {
		for j := range v {
			v[j] = float32(math.NaN())
		}
		return
	}
	var s float32
	for j, x := range v {
		e := float32(math.Exp(float64(x - m)))
		v[j] = e
		s += e
	}
	inv := 1 / s
	for j := range v {
		v[j] *= inv
	}
}

func (b *Backend) Argsort(x tensor.Tensor, axis int) tensor.Tensor {
	return b.lines("Argsort", x, axis, tensor.Int32, func(in []float32, out func(int, float32)) {
		idx := make([]int, len(in))
		for j := range idx {
			idx[j] = j
		}
		sort.SliceStable(idx, func(p, q int) bool { return in[idx[p]] < in[idx[q]] })
		for j, v := range idx {
			out(j, float32(v))
		}
	})
}

// ArgPartition places the kth smallest at position kth, smaller before and
// larger after (here: a full stable sort, which satisfies the contract).
func (b *Backend) ArgPartition(x tensor.Tensor, kth int, axis int) tensor.Tensor {
	if t, ok := x.(*T); ok {
		if ax, err := normAxis(axis, len(t.shape)); err == nil && (kth < 0 || kth >= t.shape[ax]) {
			return b.fail("ArgPartition", "kth %d outside axis of %d", kth, t.shape[ax])
		}
	}
	return b.Argsort(x, axis)
}

func (b *Backend) Cumsum(x tensor.Tensor, axis int) tensor.Tensor {
	if t, ok := x.(*T); ok && t.dt == tensor.Int32 {
		r := b.lines("Cumsum", x, axis, tensor.Int32, func(in []float32, out func(int, float32)) {
			var s float32
			for j, v := range in {
				s += v
				out(j, s)
			}
		})
		return r
	}
	return b.lines("Cumsum", x, axis, tensor.Float32, func(in []float32, out func(int, float32)) {
		var s float32
		for j, v := range in {
			s += v
			out(j, s)
		}
	})
}

// Categorical samples with the Gumbel-max trick from a PCG seeded by seed.
func (b *Backend) Categorical(logits tensor.Tensor, seed uint64) tensor.Tensor {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	r := b.reduce("Categorical", logits, -1, false, func(line func(int) float32, n int) float32 {
		best, bi := math.Inf(-1), 0
		for j := 0; j < n; j++ {
			u := rng.Float64()
			for u == 0 {
				u = rng.Float64()
			}
			if g := float64(line(j)) - math.Log(-math.Log(u)); g > best {
				best, bi = g, j
			}
		}
		return float32(bi)
	})
	return b.AsType(r, tensor.Int32)
}
