package mlx

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"perch/engine/gemma4"
	"perch/engine/golden"
	"perch/engine/kvcache"
	"perch/engine/tensor"
)

const testdata = "../../testdata"

// generation runs greedy decoding the way the engine does: prefill, then one
// token per step, sweeping everything but the next logits between steps.
type generation struct {
	t      *testing.T
	b      *Backend
	m      *gemma4.Model
	caches []kvcache.Cache
}

func (g *generation) state() []tensor.Tensor {
	var out []tensor.Tensor
	for _, c := range g.caches {
		if c != nil {
			out = append(out, c.State()...)
		}
	}
	return out
}

// run generates n tokens from prompt; onLogits sees each step's logits
// [V] (step 0 is the prefill's last row). It stops early, leaving the next
// step's graph in flight, when cancelAt >= 0.
func (g *generation) run(prompt []int32, n, cancelAt int, onLogits func(step int, all []float32)) []int32 {
	b, t := g.b, g.t
	g.caches = g.m.Text.NewCaches()
	defer func() {
		for _, c := range g.caches {
			if c != nil {
				c.Release(b)
			}
		}
		b.Sweep()
	}()
	L := len(prompt)
	logits := g.m.Text.Forward(gemma4.Inputs{IDs: b.FromInt32(prompt, []int{1, L})}, g.caches)
	if err := b.Eval(append(g.state(), logits)...); err != nil {
		t.Fatal(err)
	}
	if onLogits != nil {
		onLogits(0, mustF32(t, b, logits))
	}
	last := b.Slice(logits, 1, L-1, L)
	b.Sweep(last)
	var ids []int32
	for i := range n {
		next := b.Argmax(b.Reshape(last, -1), -1)
		if i == cancelAt {
			b.AsyncEval(next) // cancelled while the step runs
			return ids
		}
		id, err := b.Int32s(next)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id[0])
		last = g.m.Text.Forward(gemma4.Inputs{IDs: b.FromInt32(id, []int{1, 1})}, g.caches)
		if err := b.Eval(append(g.state(), last)...); err != nil {
			t.Fatal(err)
		}
		if onLogits != nil && i+1 < n {
			onLogits(i+1, mustF32(t, b, last))
		}
		b.Sweep(last)
	}
	return ids
}

func mustF32(t *testing.T, b *Backend, x tensor.Tensor) []float32 {
	t.Helper()
	v, err := b.Float32s(x)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestModelGoldens runs the tiny Gemma-4 checkpoints on MLX against the
// mlx-vlm goldens (greedy ids exact, logits within atol), and checks that
// active memory returns to its level after a generation and after a
// cancelled one.
func TestModelGoldens(t *testing.T) {
	for _, fx := range []struct {
		name string
		atol float64 // on MLX's CPU; bf16 is bit-exact there
	}{
		{"text-tiny", 2e-4},
		{"text-tiny-q4", 2e-4},
		{"text-tiny-bf16", 0},
	} {
		t.Run(fx.name, func(t *testing.T) {
			b := newBackend(t)
			dir := filepath.Join(testdata, "models", fx.name)
			if _, err := os.Stat(dir); err != nil {
				t.Skipf("fixture %s missing: %v", dir, err)
			}
			atol := fx.atol
			if b.Device() == "gpu" {
				atol = max(atol, 0.5) // Metal kernels round in another order
			}
			m, err := gemma4.Load(b, dir)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			gf, err := golden.Open(filepath.Join(testdata, "goldens", fx.name, "golden.safetensors"))
			if err != nil {
				t.Fatal(err)
			}
			defer gf.Close()
			prompt, err := gf.I32("input_ids")
			if err != nil {
				t.Fatal(err)
			}
			wantIDs, _ := gf.I32("generated_ids")
			wantPrefill, _ := gf.F32("prefill_logits")
			wantSteps, _ := gf.F32("step_logits")
			V := m.Cfg.Text.VocabSize

			loaded := b.ActiveMemory()
			g := &generation{t: t, b: b, m: m}
			worst := 0.0
			check := func(what string, got, want []float32) {
				d, err := golden.Compare(got, want)
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				worst = math.Max(worst, d.Max)
				if d.Max > atol {
					t.Errorf("%s: %v exceeds atol %g", what, d, atol)
				}
			}
			ids := g.run(prompt, len(wantIDs), -1, func(step int, got []float32) {
				if step == 0 {
					check("prefill_logits", got, wantPrefill)
					got = got[len(got)-V:]
				}
				check("step_logits", got, wantSteps[step*V:(step+1)*V])
			})
			if !equalInts32(ids, wantIDs) {
				t.Fatalf("greedy ids %v\nwant %v", ids, wantIDs)
			}
			after := b.ActiveMemory()
			t.Logf("max |d logit| %.3g; active memory: loaded %d, after generation %d", worst, loaded, after)
			if after-loaded > 4096 { // GeluTanh/Softplus constants are made once
				t.Errorf("first generation kept %d bytes", after-loaded)
			}

			g.run(prompt, len(wantIDs), -1, nil)
			if got := b.ActiveMemory(); got != after {
				t.Errorf("after a second generation: active memory %d, want %d", got, after)
			}
			g.run(prompt, len(wantIDs), 5, nil)
			if got := b.ActiveMemory(); got != after {
				t.Errorf("after a cancelled generation: active memory %d, want %d", got, after)
			}
			if u, _ := b.Live(); u != 0 {
				t.Errorf("%d unpinned arrays left", u)
			}
		})
	}
}
