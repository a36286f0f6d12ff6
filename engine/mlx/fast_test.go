package mlx

import (
	"fmt"
	"math"
	"os"
	"testing"

	"perch/engine/tensor"
)

// shortcutCase is one op whose result must not change, bit for bit, when
// the host-time shortcuts are on (fast.go).
type shortcutCase struct {
	name string
	// via is the composite the compiled run must have traced (-1: none).
	via int
	run func(b *Backend, g *gen) tensor.Tensor
}

func shortcutCases() []shortcutCase {
	in := func(g *gen, dt tensor.DType, scale float32, shape ...int) tensor.Tensor {
		return g.be.FromFloat32(g.r.f32(size(shape), scale), shape, dt)
	}
	gelu := func(dt tensor.DType, shape ...int) func(b *Backend, g *gen) tensor.Tensor {
		return func(b *Backend, g *gen) tensor.Tensor { return b.GeluTanh(in(g, dt, 6, shape...)) }
	}
	rms := func(dt, wdt tensor.DType, weighted bool, eps float32, shape ...int) func(b *Backend, g *gen) tensor.Tensor {
		return func(b *Backend, g *gen) tensor.Tensor {
			x := in(g, dt, 3, shape...)
			var w tensor.Tensor
			if weighted {
				w = in(g, wdt, 2, shape[len(shape)-1])
			}
			return b.RMSNorm(x, w, eps)
		}
	}
	rope := func(dt tensor.DType, dims int, base, scale float32, offset int, withFreqs bool, shape ...int) func(b *Backend, g *gen) tensor.Tensor {
		return func(b *Backend, g *gen) tensor.Tensor {
			x := in(g, dt, 2, shape...)
			var freqs tensor.Tensor
			if withFreqs { // proportional RoPE: a quarter rotated, the rest +Inf
				f := make([]float32, dims/2)
				for i := range f {
					f[i] = float32(math.Inf(1))
					if i < dims/8 {
						f[i] = float32(math.Pow(1e6, float64(2*i)/float64(dims)))
					}
				}
				freqs = b.FromFloat32(f, []int{dims / 2}, tensor.Float32)
				b.Pin(freqs)
			}
			return b.RoPE(x, dims, false, base, scale, offset, freqs)
		}
	}
	sdpa := func(dt tensor.DType, scale float32, q, kv []int) func(b *Backend, g *gen) tensor.Tensor {
		return func(b *Backend, g *gen) tensor.Tensor {
			return b.SDPA(in(g, dt, 2, q...), in(g, dt, 2, kv...), in(g, dt, 2, kv...), scale, tensor.Mask{})
		}
	}
	sdpaMasked := func(dt tensor.DType, scale float32, q, kv []int) func(b *Backend, g *gen) tensor.Tensor {
		return func(b *Backend, g *gen) tensor.Tensor {
			S := kv[2]
			vis := make([]bool, S)
			for i := range vis {
				vis[i] = i%3 != 1 // some slots masked, the first visible
			}
			mask := b.FromBool(vis, []int{1, S})
			return b.SDPA(in(g, dt, 2, q...), in(g, dt, 2, kv...), in(g, dt, 2, kv...), scale, tensor.Mask{Kind: tensor.MaskArray, Array: mask})
		}
	}
	linear := func(dt tensor.DType, bias, pin bool, x ...int) func(b *Backend, g *gen) tensor.Tensor {
		return func(b *Backend, g *gen) tensor.Tensor {
			l := g.Dense(0, 24, x[len(x)-1], bias, dt)
			if pin {
				b.Pin(l.W)
			}
			return b.Linear(in(g, dt, 1, x...), l)
		}
	}
	return []shortcutCase{
		{"GeluTanh/f32", fnGeluTanh, gelu(tensor.Float32, 1, 1, 128)},
		{"GeluTanh/bf16", fnGeluTanh, gelu(tensor.BFloat16, 1, 1, 96)},
		{"GeluTanh/f16", fnGeluTanh, gelu(tensor.Float16, 1, 1, 64)},
		{"GeluTanh/prefill", -1, gelu(tensor.Float32, 1, 5, 32)},
		{"RMSNorm/f32", fnRMSNorm, rms(tensor.Float32, tensor.Float32, true, 1e-6, 1, 1, 64)},
		{"RMSNorm/heads bf16", fnRMSNorm, rms(tensor.BFloat16, tensor.BFloat16, true, 1e-6, 1, 1, 4, 32)},
		{"RMSNorm/no weight", fnRMSNorm, rms(tensor.Float32, tensor.Float32, false, 1e-6, 1, 1, 2, 32)},
		{"RMSNorm/no weight bf16", fnRMSNorm, rms(tensor.BFloat16, tensor.Float32, false, 1e-5, 1, 1, 1, 32)},
		{"RMSNorm/bf16 x f32 w", fnRMSNorm, rms(tensor.BFloat16, tensor.Float32, true, 1e-6, 1, 1, 128)},
		// 1/48 and 1/96 do not survive MLX's printing of kernel constants.
		{"RMSNorm/inexact 1/n", -1, rms(tensor.Float32, tensor.Float32, true, 1e-6, 1, 1, 48)},
		{"RMSNorm/inexact 1/n bf16", -1, rms(tensor.BFloat16, tensor.Float32, false, 1e-6, 1, 1, 2, 96)},
		{"RMSNorm/f16", fnRMSNorm, rms(tensor.Float16, tensor.Float16, true, 1e-5, 1, 1, 3, 16)},
		{"RMSNorm/prefill", -1, rms(tensor.Float32, tensor.Float32, true, 1e-6, 1, 7, 64)},
		{"RoPE/decode", fnRoPEApply, rope(tensor.Float32, 32, 10000, 1, 5, false, 1, 2, 1, 32)},
		{"RoPE/offset 0", fnRoPEApply, rope(tensor.Float32, 32, 10000, 1, 0, false, 1, 1, 1, 32)},
		{"RoPE/far", fnRoPEApply, rope(tensor.Float32, 64, 10000, 1, 100003, false, 1, 4, 1, 64)},
		{"RoPE/bf16", fnRoPEApply, rope(tensor.BFloat16, 64, 10000, 1, 37, false, 1, 8, 1, 64)},
		{"RoPE/f16 scaled", fnRoPEApply, rope(tensor.Float16, 16, 500, 0.5, 11, false, 1, 3, 1, 16)},
		{"RoPE/freqs with +Inf", fnRoPEApply, rope(tensor.Float32, 64, 0, 1, 40, true, 1, 2, 1, 64)},
		{"RoPE/freqs bf16", fnRoPEApply, rope(tensor.BFloat16, 64, 0, 1, 9, true, 1, 1, 1, 64)},
		{"RoPE/prefill", -1, rope(tensor.Float32, 32, 10000, 1, 3, false, 1, 2, 6, 32)},
		{"RoPE/batch", -1, rope(tensor.Float32, 16, 10000, 1, 2, false, 2, 2, 1, 16)},
		{"SDPA/gqa", -1, sdpa(tensor.Float32, 1, []int{1, 2, 1, 32}, []int{1, 1, 9, 32})},
		{"SDPA/gqa scaled", -1, sdpa(tensor.Float32, 0.3, []int{1, 8, 1, 16}, []int{1, 1, 5, 16})},
		{"SDPA/mha", -1, sdpa(tensor.Float32, 0.125, []int{1, 2, 1, 16}, []int{1, 2, 5, 16})},
		{"SDPA/bf16", -1, sdpa(tensor.BFloat16, 1, []int{1, 4, 1, 32}, []int{1, 1, 6, 32})},
		{"SDPA/prefill", -1, sdpa(tensor.Float32, 1, []int{1, 2, 3, 16}, []int{1, 1, 4, 16})},
		{"SDPA/mha prefill", -1, sdpa(tensor.Float32, 0.125, []int{1, 3, 7, 16}, []int{1, 3, 7, 16})},
		{"SDPA/f16", -1, sdpa(tensor.Float16, 1, []int{1, 2, 1, 16}, []int{1, 1, 3, 16})},
		{"SDPA/batch", -1, sdpa(tensor.Float32, 1, []int{2, 2, 1, 16}, []int{2, 1, 3, 16})},
		{"SDPA/masked gqa", -1, sdpaMasked(tensor.Float32, 1, []int{1, 2, 1, 32}, []int{1, 1, 9, 32})},
		{"SDPA/masked mha scaled", -1, sdpaMasked(tensor.Float32, 0.125, []int{1, 2, 1, 16}, []int{1, 2, 7, 16})},
		{"SDPA/masked bf16", -1, sdpaMasked(tensor.BFloat16, 1, []int{1, 4, 1, 32}, []int{1, 1, 6, 32})},
		{"SDPA/masked f16", -1, sdpaMasked(tensor.Float16, 1, []int{1, 2, 1, 16}, []int{1, 1, 5, 16})},
		{"Linear/decode", -1, linear(tensor.Float32, false, true, 1, 1, 64)},
		{"Linear/prefill", -1, linear(tensor.Float32, false, true, 1, 5, 64)},
		{"Linear/2-d", -1, linear(tensor.Float32, false, true, 3, 32)},
		{"Linear/batch", -1, linear(tensor.Float32, false, true, 2, 3, 32)},
		{"Linear/bf16", -1, linear(tensor.BFloat16, false, true, 1, 1, 48)},
		{"Linear/bias", -1, linear(tensor.Float32, true, true, 1, 1, 32)},
		{"Linear/unpinned", -1, linear(tensor.Float32, false, false, 1, 1, 32)},
	}
}

// TestShortcutsBitExact checks every shortcut against MLX's own op-by-op
// graphs: the same bits, with graph shortcuts only and with compiled
// composites, on first use and on the cached path.
func TestShortcutsBitExact(t *testing.T) {
	ref := newBackend(t)
	if ref.gpu {
		t.Skip("the shortcuts are for MLX's CPU stream")
	}
	ref.fast, ref.compile = false, false
	for _, mode := range []string{"graph", "compiled"} {
		t.Run(mode, func(t *testing.T) {
			b := newBackend(t)
			if !b.fast {
				t.Skip("shortcuts unavailable (PERCH_MLX_COMPILE=0, or mlx-c lacks the compile API)")
			}
			b.compile = mode == "compiled" && b.compile
			if mode == "compiled" && !b.compiled() {
				t.Skipf("compiled composites unavailable: %v", jitErr)
			}
			for _, c := range shortcutCases() {
				seed := caseSeed(c.name)
				want := mustF32(t, ref, c.run(ref, &gen{ref, newRand(seed)}))
				for try := range 2 {
					calls := b.calls(c.via)
					got := mustF32(t, b, c.run(b, &gen{b, newRand(seed)}))
					if err := sameBits(got, want); err != "" {
						t.Errorf("%s (call %d): %s", c.name, try+1, err)
					}
					if mode == "compiled" && c.via >= 0 && b.calls(c.via) == calls {
						t.Errorf("%s (call %d): the compiled composite was not used", c.name, try+1)
					}
				}
				ref.Sweep()
				b.Sweep()
			}
			if err := b.Err(); err != nil {
				t.Fatal(err)
			}
		})
	}
	if err := ref.Err(); err != nil {
		t.Fatal(err)
	}
}

// calls counts the calls of the backend's composites of one kind.
func (b *Backend) calls(kind int) int {
	n := 0
	for k, e := range b.fns {
		if int(k.kind) == kind {
			n += e.calls
		}
	}
	return n
}

func sameBits(got, want []float32) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d values, want %d", len(got), len(want))
	}
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			return fmt.Sprintf("element %d is %v, want %v", i, got[i], want[i])
		}
	}
	return ""
}

// TestShortcutSetting: PERCH_MLX_COMPILE picks the shortcuts.
func TestShortcutSetting(t *testing.T) {
	for _, c := range []struct{ env, want string }{
		{"0", "off"}, {"off", "off"}, {"graph", "graph"}, {"composites", "compiled"}, {"1", "compiled"}, {"", "compiled"},
	} {
		t.Setenv("PERCH_MLX_COMPILE", c.env)
		b := newBackend(t)
		got := b.Shortcuts()
		if b.gpu {
			if got != "off" {
				t.Errorf("GPU backend uses shortcuts %q", got)
			}
			continue
		}
		if !cFastAvailable() {
			t.Skip("mlx-c lacks the compile API")
		}
		if got != c.want {
			t.Errorf("PERCH_MLX_COMPILE=%q: shortcuts %q, want %q", c.env, got, c.want)
		}
		if want := c.want == "compiled" && c.env != "composites"; b.steps != want {
			t.Errorf("PERCH_MLX_COMPILE=%q: compiled steps allowed %v, want %v", c.env, b.steps, want)
		}
	}
}

// TestJITFallback: without a C++ compiler the probe fails, and with
// compiled composites off every op takes the uncompiled path.
func TestJITFallback(t *testing.T) {
	b := newBackend(t)
	if b.gpu || !b.fast {
		t.Skip("no shortcuts here")
	}
	path := os.Getenv("PATH")
	t.Setenv("PATH", t.TempDir())
	err := b.probeJIT()
	os.Setenv("PATH", path)
	if err == nil {
		t.Fatal("probe passed without g++ on PATH")
	}
	saved := jitBroken.Load()
	jitBroken.Store(true) // as after a failed kernel build
	t.Cleanup(func() { jitBroken.Store(saved) })
	g := &gen{b, newRand(3)}
	x, w := g.F(1, 1, 64), g.F(64)
	y := b.GeluTanh(b.RMSNorm(x, w, 1e-6))
	if _, err := b.Float32s(y); err != nil {
		t.Fatal(err)
	}
	if b.compile || len(b.fns) != 0 {
		t.Errorf("composites used after a failed build: compile %v, %d composites", b.compile, len(b.fns))
	}
}

func TestPrintsExactly(t *testing.T) {
	for v, want := range map[float32]bool{
		1e-6: true, 1e-5: true, 0.5: true, 0.044715: true, float32(math.Sqrt(2 / math.Pi)): true,
		1.0 / 64: true, 1.0 / 1536: true, 16777216: false, 1.0 / 3: false,
		float32(math.Inf(-1)): false,
	} {
		if got := printsExactly(v); got != want {
			t.Errorf("printsExactly(%v) = %v, want %v", v, got, want)
		}
	}
	if !isJITFailure("[Compile::eval_cpu] Failed to compile function X: g++ not found") ||
		!isJITFailure("Could not load C++ shared library /tmp/mlx/libX.so: file too short") ||
		isJITFailure("[matmul] Last dimension of first input") {
		t.Error("isJITFailure misclassifies")
	}
}
