package gemma4_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"perch/engine/gemma4"
	"perch/engine/gocpu"
	"perch/engine/golden"
	"perch/engine/kvcache"
	"perch/engine/mlx"
	"perch/engine/tensor"
)

const testdata = "../../testdata"

type fixture struct {
	model, golden string
	// prefix of golden names the Go backend is held to (bf16 weights are
	// upcast: float32-compute goldens).
	f32prefix string
	atol      float64
}

var textFixtures = []fixture{
	{"text-tiny", "text-tiny", "", 2e-4},
	{"text-tiny-q4", "text-tiny-q4", "", 2e-4},
	{"text-tiny-bf16", "text-tiny-bf16", "f32compute_", 5e-4},
}

// backends are the Go backend's two paths and, where libmlxc loads, MLX
// (its constructor locks the test goroutine to its OS thread).
func backends() map[string]func() tensor.Backend {
	bs := map[string]func() tensor.Backend{
		"plain": func() tensor.Backend { return gocpu.New(gocpu.Options{Plain: true}) },
		"fast":  func() tensor.Backend { return gocpu.New(gocpu.Options{}) },
	}
	if mlx.Available() == nil {
		bs["mlx"] = func() tensor.Backend {
			runtime.LockOSThread()
			b, err := mlx.New()
			if err != nil {
				panic(err)
			}
			return b
		}
	}
	return bs
}

func TestMain(m *testing.M) {
	if err := mlx.Available(); err != nil {
		fmt.Println("gemma4: libmlxc not found, model tests run on the Go backend only:", err)
	}
	fast := gocpu.New(gocpu.Options{})
	fmt.Printf("gemma4: Go backend paths checked: plain, and fast with the %s kernels (exact float32 prefill; the int8 prefill: TestIntPrefillKL)\n", fast.Kernels())
	fast.Close()
	os.Exit(m.Run())
}

func load(t *testing.T, b tensor.Backend, name string) *gemma4.Model {
	t.Helper()
	m, err := gemma4.Load(b, filepath.Join(testdata, "models", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func openGolden(t *testing.T, name string) *golden.File {
	t.Helper()
	g, err := golden.Open(filepath.Join(testdata, "goldens", name, "golden.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func ids(b tensor.Backend, v []int32) tensor.Tensor { return b.FromInt32(v, []int{1, len(v)}) }

func argmax(v []float32) int32 {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return int32(best)
}

func checkClose(t testing.TB, what string, got, want []float32, atol float64) {
	t.Helper()
	d, err := golden.Compare(got, want)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if d.Max > atol {
		t.Fatalf("%s: %v exceeds atol %g", what, d, atol)
	}
	t.Logf("%s: %v", what, d)
}

// TestTextGoldens: prefill logits, greedy decode with the KV caches (ids and
// per-step logits), and a cache-free forward over the whole sequence.
func TestTextGoldens(t *testing.T) {
	for _, fx := range textFixtures {
		for bn, mk := range backends() {
			if bn == "mlx" && fx.f32prefix != "" {
				continue // MLX computes bf16 in bf16: engine/mlx checks it against the bf16 goldens
			}
			t.Run(fx.model+"/"+bn, func(t *testing.T) {
				b := mk()
				defer b.Close()
				m := load(t, b, fx.model)
				g := openGolden(t, fx.golden)
				prompt := must(g.I32("input_ids"))
				V := m.Cfg.Text.VocabSize

				caches := m.Text.NewCaches()
				logits := m.Text.Forward(gemma4.Inputs{IDs: ids(b, prompt)}, caches)
				got := must(b.Float32s(logits))
				if fx.f32prefix == "" {
					checkClose(t, "prefill_logits", got, must(g.F32("prefill_logits")), fx.atol)
				}
				wantIDs := must(g.I32(fx.f32prefix + "generated_ids"))
				wantSteps := must(g.F32(fx.f32prefix + "step_logits"))
				last := got[len(got)-V:]
				for i := range wantIDs {
					checkClose(t, "step_logits row", last, wantSteps[i*V:(i+1)*V], fx.atol)
					next := argmax(last)
					if next != wantIDs[i] {
						t.Fatalf("step %d: greedy id %d, want %d", i, next, wantIDs[i])
					}
					out := m.Text.Forward(gemma4.Inputs{IDs: ids(b, []int32{next})}, caches)
					last = must(b.Float32s(out))
				}
				full := must(g.I32("full_sequence_ids"))
				logits = m.Text.Forward(gemma4.Inputs{IDs: ids(b, full)}, nil)
				checkClose(t, "full_sequence_logits", must(b.Float32s(logits)), must(g.F32(fx.f32prefix+"full_sequence_logits")), fx.atol)
			})
		}
	}
}

// TestCacheConsistency: prefilling n tokens gives the same last logits as
// prefilling n-1 and decoding one, across the sliding window.
func TestCacheConsistency(t *testing.T) {
	b := gocpu.New(gocpu.Options{})
	defer b.Close()
	for _, name := range []string{"text-tiny", "text-tiny-q4", "vision-unified-tiny"} {
		m := load(t, b, name)
		seq := []int32{2, 485, 494, 539, 301, 688, 630, 971, 759, 337, 479, 537, 34, 448, 774, 125, 305, 221, 13, 21}
		for _, n := range []int{5, 9, 13, 20} {
			all := must(b.Float32s(m.Text.Forward(gemma4.Inputs{IDs: ids(b, seq[:n]), LastOnly: true}, m.Text.NewCaches())))
			cs := m.Text.NewCaches()
			m.Text.Forward(gemma4.Inputs{IDs: ids(b, seq[:n-1]), LastOnly: true}, cs)
			step := must(b.Float32s(m.Text.Forward(gemma4.Inputs{IDs: ids(b, seq[n-1:n])}, cs)))
			checkClose(t, name+" prefill n vs n-1 + decode", step, all, 1e-4)
		}
	}
}

// TestWindowTrimAfterWrap: with slack in the sliding caches, a cache that
// has wrapped can be cut back and continued, giving the same logits as a
// fresh prefill of the new sequence (what a follow-up chat turn does).
func TestWindowTrimAfterWrap(t *testing.T) {
	for bn, mk := range backends() {
		t.Run(bn, func(t *testing.T) {
			b := mk()
			m := load(t, b, "text-tiny")
			m.Text.WindowSlack = 6
			old := []int32{2, 485, 494, 539, 301, 688, 630, 971, 759, 337, 479, 537, 34, 448, 774, 125} // 16 > window 8
			cs := m.Text.NewCaches()
			m.Text.Forward(gemma4.Inputs{IDs: ids(b, old[:10])}, cs)
			for _, id := range old[10:] {
				m.Text.Forward(gemma4.Inputs{IDs: ids(b, []int32{id})}, cs)
			}
			// Keep 11 tokens (drop 5 <= slack+1), then continue differently.
			for _, c := range cs {
				if c != nil && !c.CanTrim(5) {
					t.Fatalf("cache %T cannot trim 5 with slack 6", c)
				}
			}
			for _, c := range cs {
				if c != nil {
					c.Trim(5)
				}
			}
			next := []int32{305, 221, 13}
			got := must(b.Float32s(m.Text.Forward(gemma4.Inputs{IDs: ids(b, next), LastOnly: true}, cs)))
			fresh := append(append([]int32{}, old[:11]...), next...)
			want := must(b.Float32s(m.Text.Forward(gemma4.Inputs{IDs: ids(b, fresh), LastOnly: true}, m.Text.NewCaches())))
			checkClose(t, "trimmed continuation vs fresh", got, want, 1e-4)
			for _, c := range cs {
				if w, ok := c.(*kvcache.Window); ok && w.CanTrim(8) {
					t.Fatalf("sliding cache claims it can trim past its slack")
				}
			}
		})
	}
}
