package mlx

import (
	"testing"
	"time"

	"perch/engine/tensor"
)

// BenchmarkCompositeHost is the host time to record one decode-sized call
// of each composite op (evaluated in batches of 64, outside the timing).
func BenchmarkCompositeHost(bb *testing.B) {
	cases := []struct {
		name string
		run  func(b *Backend, g *gen) func() tensor.Tensor
	}{
		{"rms", func(b *Backend, g *gen) func() tensor.Tensor {
			x, w := g.F(1, 1, 64), g.F(64)
			b.Pin(x, w)
			return func() tensor.Tensor { return b.RMSNorm(x, w, 1e-6) }
		}},
		{"rms-noweight", func(b *Backend, g *gen) func() tensor.Tensor {
			x := g.F(1, 1, 1, 32)
			b.Pin(x)
			return func() tensor.Tensor { return b.RMSNorm(x, nil, 1e-6) }
		}},
		{"rope", func(b *Backend, g *gen) func() tensor.Tensor {
			x := g.F(1, 2, 1, 32)
			b.Pin(x)
			return func() tensor.Tensor { return b.RoPE(x, 32, false, 10000, 1, 20, nil) }
		}},
		{"gelu", func(b *Backend, g *gen) func() tensor.Tensor {
			x := g.F(1, 1, 128)
			b.Pin(x)
			return func() tensor.Tensor { return b.GeluTanh(x) }
		}},
		{"sdpa", func(b *Backend, g *gen) func() tensor.Tensor {
			q, k, v := g.F(1, 2, 1, 32), g.F(1, 1, 20, 32), g.F(1, 1, 20, 32)
			b.Pin(q, k, v)
			return func() tensor.Tensor { return b.SDPA(q, k, v, 1, tensor.Mask{}) }
		}},
		{"linear", func(b *Backend, g *gen) func() tensor.Tensor {
			x := g.F(1, 1, 64)
			w := g.Dense(0, 128, 64, false, tensor.Float32)
			b.Pin(x, w.W)
			return func() tensor.Tensor { return b.Linear(x, w) }
		}},
		{"reshape", func(b *Backend, g *gen) func() tensor.Tensor {
			x := g.F(1, 1, 128)
			b.Pin(x)
			return func() tensor.Tensor { return b.Reshape(x, 1, 1, 2, 64) }
		}},
		{"transpose", func(b *Backend, g *gen) func() tensor.Tensor {
			x := g.F(1, 1, 2, 64)
			b.Pin(x)
			return func() tensor.Tensor { return b.Transpose(x, 0, 2, 1, 3) }
		}},
		{"slice", func(b *Backend, g *gen) func() tensor.Tensor {
			x := g.F(1, 1, 256, 32)
			b.Pin(x)
			return func() tensor.Tensor { return b.Slice(x, 2, 0, 20) }
		}},
		{"mul", func(b *Backend, g *gen) func() tensor.Tensor {
			x := g.F(1, 1, 128)
			b.Pin(x)
			return func() tensor.Tensor { return b.Mul(x, x) }
		}},
	}
	for _, c := range cases {
		bb.Run(c.name, func(bb *testing.B) {
			b := newBackend(bb)
			op := c.run(b, &gen{b, newRand(1)})
			var host time.Duration
			outs := make([]tensor.Tensor, 0, 64)
			bb.ResetTimer()
			for i := 0; i < bb.N; i++ {
				t0 := time.Now()
				outs = append(outs, op())
				host += time.Since(t0)
				if len(outs) == cap(outs) || i == bb.N-1 {
					if err := b.Eval(outs...); err != nil {
						bb.Fatal(err)
					}
					outs = outs[:0]
					b.Sweep()
				}
			}
			bb.ReportMetric(float64(host.Nanoseconds())/float64(bb.N)/1000, "host_us/op")
		})
	}
}
