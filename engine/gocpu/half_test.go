package gocpu

import (
	"encoding/binary"
	"math"
	"math/rand"
	"testing"
	"unsafe"

	"perch/engine/tensor"
)

// 2-byte storage: bf16/f16 tensors from FromBytes stay 2 bytes and every
// op, fast or plain, gives exactly what it gives on the same values held
// as float32.

// TestWidenExact widens every bf16 and f16 bit pattern with every kernel
// set, at lengths with and without a vector tail.
func TestWidenExact(t *testing.T) {
	src := make([]uint16, 1<<16+5)
	for i := range src {
		src[i] = uint16(i)
	}
	for _, ks := range testedKernelSets(t) {
		for _, f16 := range []bool{false, true} {
			for _, n := range []int{0, 1, 7, 8, 9, 31, len(src)} {
				dst := make([]float32, n)
				if f16 {
					ks.widenF16(dst, src)
				} else {
					ks.widenBF16(dst, src)
				}
				for i, v := range dst {
					want := math.Float32frombits(uint32(src[i]) << 16)
					if f16 {
						want = F16ToF32(src[i])
					}
					if math.Float32bits(v) != math.Float32bits(want) {
						t.Fatalf("%s f16=%v n=%d: %#04x widens to %#x, want %#x", ks.name, f16, n, src[i], math.Float32bits(v), math.Float32bits(want))
					}
				}
			}
		}
	}
}

// halfBytes is v as little-endian bf16 (or f16) bytes, and v rounded so.
func halfBytes(v []float32, f16 bool) ([]byte, []float32) {
	raw := make([]byte, 2*len(v))
	h := make([]uint16, len(v))
	narrow(h, v, f16)
	r := make([]float32, len(v))
	widenBF16Go(r, h)
	if f16 {
		widenF16Go(r, h)
	}
	for i, x := range h {
		binary.LittleEndian.PutUint16(raw[2*i:], x)
	}
	return raw, r
}

func TestFromBytesHalfAliases(t *testing.T) {
	b := New(Options{})
	defer b.Close()
	raw, want := halfBytes([]float32{1, -2.5, 3e-3, 65504}, false)
	x := b.FromBytes(raw, tensor.BFloat16, []int{2, 2}).(*T)
	if x.f != nil || len(x.h) != 4 || unsafe.Pointer(&x.h[0]) != unsafe.Pointer(&raw[0]) {
		t.Fatalf("bf16 tensor not kept as a view of its bytes: f=%v h=%d", x.f != nil, len(x.h))
	}
	if got := must(b.Float32s(x)); !equalBits(got, want) {
		t.Fatalf("Float32s %v, want %v", got, want)
	}
	odd := append([]byte{0}, raw...)[1:] // unaligned: copied
	if y := b.FromBytes(odd, tensor.BFloat16, []int{4}).(*T); !equalBits(must(b.Float32s(y)), want) {
		t.Fatal("unaligned bf16 bytes read back wrong")
	}
}

func equalBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// halfLinear makes l's weight (dense) or scales and biases (quantized) 2
// bytes wide, and returns it with a float32 twin holding the same values.
func halfLinear(b *Backend, l *tensor.Linear, f16 bool) (half, twin *tensor.Linear) {
	dt := tensor.BFloat16
	if f16 {
		dt = tensor.Float16
	}
	conv := func(x tensor.Tensor) (tensor.Tensor, tensor.Tensor) {
		t := x.(*T)
		raw, r := halfBytes(t.f, f16)
		return b.FromBytes(raw, dt, t.shape), b.FromFloat32(r, t.shape, tensor.Float32)
	}
	h, w := *l, *l
	if l.Quantized() {
		h.Scales, w.Scales = conv(l.Scales)
		h.Biases, w.Biases = conv(l.Biases)
	} else {
		h.W, w.W = conv(l.W)
	}
	return &h, &w
}

// TestHalfLinear: 2-byte dense weights and 2-byte scales give, on each
// path, bit for bit what their float32 twins give (the kernels widen them
// exactly), and the fast path stays within dotTol of the plain one.
func TestHalfLinear(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		r := rand.New(rand.NewSource(11))
		plain, fast := New(Options{Plain: true}), New(Options{Threads: 3})
		defer plain.Close()
		defer fast.Close()
		cases := []struct{ in, out, bits, gs int }{
			{1, 3, 0, 0}, {7, 5, 0, 0}, {33, 17, 0, 0}, {100, 23, 0, 0}, {1536, 40, 0, 0},
			{64, 7, 4, 32}, {192, 33, 4, 64}, {96, 9, 4, 32}, {256, 21, 8, 64}, {1536, 37, 4, 64},
		}
		for _, c := range cases {
			for _, f16 := range []bool{false, true} {
				l := randLinear(r, 0, c.out, c.in, c.bits, c.gs, c.out%2 == 1)
				half, twin := halfLinear(plain, l, f16)
				w, _ := plain.checkLinear("test", twin)
				for _, rows := range []int{1, 2, 7, 8, 17, 64} {
					x := randFloats(r, rows*c.in, 1)
					xt := plain.FromFloat32(x, []int{rows, c.in}, tensor.Float32)
					for name, be := range map[string]*Backend{"plain": plain, "fast": fast} {
						got := must(be.Float32s(be.Linear(xt, half)))
						want := must(be.Float32s(be.Linear(xt, twin)))
						if !equalBits(got, want) {
							t.Fatalf("%s %+v f16=%v rows=%d: 2-byte storage changes the result", name, c, f16, rows)
						}
					}
					got := must(fast.Float32s(fast.Linear(xt, half)))
					want := must(plain.Float32s(plain.Linear(xt, half)))
					if e := relErr(t, got, want, linearScale(w, 0, x, rows)); e > dotTol {
						t.Fatalf("%+v f16=%v rows=%d: fast differs from plain by %.3g", c, f16, rows, e)
					}
				}
				ids := plain.FromInt32([]int32{0, int32(c.out - 1), 1 % int32(c.out)}, []int{3})
				if !equalBits(must(fast.Float32s(fast.Embedding(half, ids))), must(fast.Float32s(fast.Embedding(twin, ids)))) {
					t.Fatalf("%+v f16=%v: Embedding of 2-byte rows differs", c, f16)
				}
			}
		}
		if err := fast.Err(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestHalfOps: shape, elementwise and normalisation ops read 2-byte
// tensors as their float32 values.
func TestHalfOps(t *testing.T) {
	b := New(Options{})
	defer b.Close()
	r := rand.New(rand.NewSource(12))
	raw, vals := halfBytes(randFloats(r, 24, 2), false)
	h := b.FromBytes(raw, tensor.BFloat16, []int{2, 3, 4})
	f := b.FromFloat32(vals, []int{2, 3, 4}, tensor.Float32)
	idx := b.FromInt32([]int32{2, 0}, []int{2})
	ops := map[string]func(x tensor.Tensor) tensor.Tensor{
		"reshape":   func(x tensor.Tensor) tensor.Tensor { return b.Reshape(x, 6, 4) },
		"slice":     func(x tensor.Tensor) tensor.Tensor { return b.Slice(x, 1, 1, 3) },
		"slice0":    func(x tensor.Tensor) tensor.Tensor { return b.Slice(x, 0, 1, 2) },
		"transpose": func(x tensor.Tensor) tensor.Tensor { return b.Transpose(x, 2, 0, 1) },
		"concat":    func(x tensor.Tensor) tensor.Tensor { return b.Concat(1, x, f) },
		"take":      func(x tensor.Tensor) tensor.Tensor { return b.Take(x, idx, 1) },
		"pad":       func(x tensor.Tensor) tensor.Tensor { return b.Pad(x, 2, 1, 2, 0.5) },
		"mul":       func(x tensor.Tensor) tensor.Tensor { return b.Mul(f, x) },
		"tanh":      func(x tensor.Tensor) tensor.Tensor { return b.Tanh(x) },
		"rmsnorm":   func(x tensor.Tensor) tensor.Tensor { return b.RMSNorm(f, b.Slice(b.Reshape(x, 24), 0, 0, 4), 1e-6) },
		"sum":       func(x tensor.Tensor) tensor.Tensor { return b.Sum(x, -1, false) },
		"astype":    func(x tensor.Tensor) tensor.Tensor { return b.AsType(x, tensor.Float32) },
		"matmul":    func(x tensor.Tensor) tensor.Tensor { return b.MatMul(x, b.Transpose(f, 0, 2, 1)) },
	}
	for name, op := range ops {
		got, want := must(b.Float32s(op(h))), must(b.Float32s(op(f)))
		if !equalBits(got, want) {
			t.Fatalf("%s: %v, want %v", name, got, want)
		}
	}
	dst := b.Zeros([]int{2, 3, 4}, tensor.Float32)
	if got := must(b.Float32s(b.SliceUpdate(dst, h, 0, 0))); !equalBits(got, vals) {
		t.Fatal("SliceUpdate from a 2-byte tensor")
	}
	if err := b.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestQdotHalfScales: every set's bfloat16-scale matvecs give exactly what
// its float32 ones give on the widened scales, for each group size, with
// and without a bias tail past 8 groups.
func TestQdotHalfScales(t *testing.T) {
	r := rand.New(rand.NewSource(13))
	for _, ks := range testedKernelSets(t) {
		for _, gs := range []int{32, 64, 128} {
			for _, K := range []int{384, 448, 1536} {
				if K%gs != 0 {
					continue
				}
				n, groups := 7, K/gs
				w := make([]uint32, n*K/4)
				for i := range w {
					w[i] = r.Uint32()
				}
				_, s := halfBytes(randFloats(r, n*groups, 0.1), false)
				_, b := halfBytes(randFloats(r, n*groups, 1), false)
				sh, bh := make([]uint16, len(s)), make([]uint16, len(b))
				narrow(sh, s, false)
				narrow(bh, b, false)
				x := randFloats(r, K, 1)
				xs := make([]float32, groups)
				groupSums(x, xs, gs)
				xp := make([]float32, K)
				ks.prepQ4(x, xp)
				for _, bits := range []int{4, 8} {
					want, got := make([]float32, n), make([]float32, n)
					if bits == 4 {
						ks.q4dot(w[:n*K/8], s, b, xp, xs, want, gs)
						ks.q4dotH(w[:n*K/8], sh, bh, xp, xs, got, gs)
					} else {
						ks.q8dot(w, s, b, x, xs, want, gs)
						ks.q8dotH(w, sh, bh, x, xs, got, gs)
					}
					if !equalBits(got, want) {
						t.Fatalf("%s %d-bit K=%d gs=%d: bf16 scales give %v, want %v", ks.name, bits, K, gs, got, want)
					}
				}
			}
		}
	}
}
