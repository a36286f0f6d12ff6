package mlx

import (
	"path/filepath"
	"testing"
	"time"

	"perch/engine/gemma4"
	"perch/engine/kvcache"
	"perch/engine/tensor"
)

// BenchmarkDecodeHost runs greedy decode steps of the tiny text model and
// reports the host time to record one step's graph (Forward + argmax +
// Sweep), apart from the evaluation.
func BenchmarkDecodeHost(bb *testing.B) {
	b := newBackend(bb)
	m, err := gemma4.Load(b, filepath.Join(testdata, "models", "text-tiny"))
	if err != nil {
		bb.Fatal(err)
	}
	defer m.Close()
	caches := m.Text.NewCaches()
	state := func() []tensor.Tensor {
		var out []tensor.Tensor
		for _, c := range caches {
			if c != nil {
				out = append(out, c.State()...)
			}
		}
		return out
	}
	prompt := make([]int32, 16)
	for i := range prompt {
		prompt[i] = int32(3 + i*37%1000)
	}
	logits := m.Text.Forward(gemma4.Inputs{IDs: b.FromInt32(prompt, []int{1, len(prompt)}), LastOnly: true}, caches)
	next := b.Argmax(b.Reshape(logits, -1), -1)
	if err := b.Eval(append(state(), next)...); err != nil {
		bb.Fatal(err)
	}
	b.Sweep(next)
	var host time.Duration
	bb.ResetTimer()
	for i := 0; i < bb.N; i++ {
		if i%256 == 255 { // keep the caches short
			for _, c := range caches {
				if c != nil {
					c.Release(b)
				}
			}
			caches = m.Text.NewCaches()
		}
		t0 := time.Now()
		l := m.Text.Forward(gemma4.Inputs{IDs: b.Reshape(next, 1, 1)}, caches)
		n := b.Argmax(b.Reshape(l, -1), -1)
		b.Sweep(n)
		host += time.Since(t0)
		if err := b.Eval(append(state(), n)...); err != nil {
			bb.Fatal(err)
		}
		next = n
	}
	bb.ReportMetric(float64(host.Microseconds())/float64(bb.N), "host_us/step")
	_ = kvcache.Cache(nil)
}

// BenchmarkForwardHostNoEval records one-token forward graphs without caches
// and never evaluates them: graph construction only (for profiling).
func BenchmarkForwardHostNoEval(bb *testing.B) {
	b := newBackend(bb)
	m, err := gemma4.Load(b, filepath.Join(testdata, "models", "text-tiny"))
	if err != nil {
		bb.Fatal(err)
	}
	defer m.Close()
	id := b.FromInt32([]int32{5}, []int{1, 1})
	b.Pin(id)
	bb.ResetTimer()
	for i := 0; i < bb.N; i++ {
		l := m.Text.Forward(gemma4.Inputs{IDs: id}, nil)
		b.Argmax(b.Reshape(l, -1), -1)
		b.Sweep()
	}
}
