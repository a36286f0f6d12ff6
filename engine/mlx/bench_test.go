package mlx

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"perch/engine/gemma4"
	"perch/engine/kvcache"
	"perch/engine/tensor"
)

// BenchmarkOpHost is the host cost of recording one op in the graph (cgo
// crossing, handle, arena slot), swept every 1024 ops, never evaluated.
func BenchmarkOpHost(bb *testing.B) {
	b := newBackend(bb)
	x := b.FromFloat32(make([]float32, 64), []int{64}, tensor.Float32)
	b.Pin(x)
	bb.ReportAllocs()
	bb.ResetTimer()
	for i := range bb.N {
		b.Add(x, x)
		if i%1024 == 1023 {
			b.Sweep()
		}
	}
	bb.StopTimer()
	if err := b.Err(); err != nil {
		bb.Fatal(err)
	}
}

// BenchmarkLayerHost records a decoder-layer-shaped graph (norms, four
// quantized projections, RoPE, SDPA, GeGLU MLP, residuals: ~25 ops) and sweeps
// it, without evaluating: the per-layer host time of a decode step.
func BenchmarkLayerHost(bb *testing.B) {
	b := newBackend(bb)
	r := newRand(1)
	const H, D = 256, 64
	q := func(out, in int) *tensor.Linear {
		g := &gen{b, r}
		l := g.Quant(0, out, in, 4, 64, false, tensor.BFloat16)
		b.Pin(l.W, l.Scales, l.Biases)
		return l
	}
	wq, wk, wv, wo := q(H, H), q(D, H), q(D, H), q(H, H)
	gate, up, down := q(4*H, H), q(4*H, H), q(H, 4*H)
	norm := b.FromFloat32(r.f32(H, 1), []int{H}, tensor.BFloat16)
	x := b.FromFloat32(r.f32(H, 1), []int{1, 1, H}, tensor.BFloat16)
	k := b.FromFloat32(r.f32(64*D, 1), []int{1, 1, 64, D}, tensor.BFloat16)
	b.Pin(norm, x, k)
	bb.ReportAllocs()
	bb.ResetTimer()
	for range bb.N {
		h := b.RMSNorm(x, norm, 1e-6)
		qq := b.Transpose(b.Reshape(b.Linear(h, wq), 1, 1, 4, D), 0, 2, 1, 3)
		kk := b.Transpose(b.Reshape(b.Linear(h, wk), 1, 1, 1, D), 0, 2, 1, 3)
		vv := b.Transpose(b.Reshape(b.Linear(h, wv), 1, 1, 1, D), 0, 2, 1, 3)
		qq = b.RoPE(b.RMSNorm(qq, nil, 1e-6), D, false, 10000, 1, 64, nil)
		kk = b.RoPE(b.RMSNorm(kk, nil, 1e-6), D, false, 10000, 1, 64, nil)
		keys := b.SliceUpdate(k, kk, 2, 63)
		vals := b.SliceUpdate(k, vv, 2, 63)
		o := b.SDPA(qq, keys, vals, 1, tensor.Mask{})
		o = b.Linear(b.Reshape(b.Transpose(o, 0, 2, 1, 3), 1, 1, H), wo)
		h = b.Add(x, b.RMSNorm(o, norm, 1e-6))
		m := b.RMSNorm(h, norm, 1e-6)
		m = b.Linear(b.Mul(b.GeluTanh(b.Linear(m, gate)), b.Linear(m, up)), down)
		b.Add(h, b.RMSNorm(m, norm, 1e-6))
		b.Sweep()
	}
	bb.StopTimer()
	if err := b.Err(); err != nil {
		bb.Fatal(err)
	}
}

// BenchmarkDecodeHost runs greedy decode steps of the tiny text model and
// reports the host time to record a step (Forward, argmax, Sweep) apart
// from its evaluation: the mean and the median step.
func BenchmarkDecodeHost(bb *testing.B) {
	b := newBackend(bb)
	m, err := gemma4.Load(b, filepath.Join(testdata, "models", "text-tiny"))
	if err != nil {
		bb.Fatal(err)
	}
	defer m.Close()
	var caches []kvcache.Cache
	var next tensor.Tensor
	restart := func() { // a fresh 16-token prompt: the caches stay short
		for _, c := range caches {
			if c != nil {
				c.Release(b)
			}
		}
		caches = m.Text.NewCaches()
		prompt := make([]int32, 16)
		for i := range prompt {
			prompt[i] = int32(3 + i*37%1000)
		}
		l := m.Text.Forward(gemma4.Inputs{IDs: b.FromInt32(prompt, []int{1, len(prompt)}), LastOnly: true}, caches)
		next = b.Argmax(b.Reshape(l, -1), -1)
		if err := b.Eval(append(kvcache.States(caches), next)...); err != nil {
			bb.Fatal(err)
		}
		b.Sweep(next)
	}
	restart()
	steps := make([]time.Duration, 0, bb.N)
	bb.ResetTimer()
	for i := 0; i < bb.N; i++ {
		if i%256 == 255 {
			bb.StopTimer()
			restart()
			bb.StartTimer()
		}
		t0 := time.Now()
		l := m.Text.Forward(gemma4.Inputs{IDs: b.Reshape(next, 1, 1)}, caches)
		n := b.Argmax(b.Reshape(l, -1), -1)
		b.Sweep(n)
		steps = append(steps, time.Since(t0))
		if err := b.Eval(append(kvcache.States(caches), n)...); err != nil {
			bb.Fatal(err)
		}
		next = n
	}
	bb.StopTimer()
	var sum time.Duration
	for _, d := range steps {
		sum += d
	}
	slices.Sort(steps)
	bb.ReportMetric(float64(sum.Nanoseconds())/float64(len(steps))/1000, "host_us/step")
	bb.ReportMetric(float64(steps[len(steps)/2].Nanoseconds())/1000, "median_us/step")
}
