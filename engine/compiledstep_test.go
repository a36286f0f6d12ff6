package engine

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"perch/engine/gemma4"
	"perch/engine/gemma4/synth"
	"perch/engine/kvcache"
	"perch/engine/mlx"
	"perch/engine/sample"
	"perch/engine/tensor"
)

// stepRun is one greedy decode: its ids and each step's logits.
type stepRun struct {
	ids    []int32
	logits [][]float32
}

// decodeDirect decodes n tokens after prompt on b, with compiled steps when
// s is set, reading every step's logits; the caches are released after.
func decodeDirect(t *testing.T, b *mlx.Backend, m *gemma4.Model, s *stepCompiler, prompt []int32, n int, suppress tensor.Tensor) stepRun {
	t.Helper()
	V := m.Cfg.Text.VocabSize
	caches := m.Text.NewCaches()
	defer func() {
		release(b, caches)
		b.Sweep()
	}()
	logits := m.Text.Forward(gemma4.Inputs{IDs: b.FromInt32(prompt, []int{1, len(prompt)}), LastOnly: true}, caches)
	y := sample.Greedy(b, logits, suppress, V)
	first, err := b.Int32s(y)
	if err != nil {
		t.Fatal(err)
	}
	r := stepRun{ids: first}
	for i := range n {
		var l tensor.Tensor
		if s != nil {
			next, sl, ok := s.step(y, caches, suppress)
			if !ok {
				t.Fatalf("step %d: not compiled: %v", i, s.err)
			}
			y, l = next, sl
		} else {
			l = m.Text.Forward(gemma4.Inputs{IDs: b.Reshape(y, 1, 1)}, caches)
			y = sample.Greedy(b, l, suppress, V)
		}
		if err := b.Eval(append(kvcache.States(caches), y, l)...); err != nil {
			t.Fatal(err)
		}
		id, err := b.Int32s(y)
		if err != nil {
			t.Fatal(err)
		}
		v, err := b.Float32s(l)
		if err != nil {
			t.Fatal(err)
		}
		r.ids = append(r.ids, id[0])
		r.logits = append(r.logits, v)
		b.Sweep(append(kvcache.States(caches), y, suppress)...)
	}
	return r
}

// TestCompiledStepMatches: compiled greedy steps give the ordinary path's
// ids, and its logits up to the order of attention's sums (reported), on
// every text fixture, with a ring that wraps and with the engine's slack,
// across a full cache's block boundary, with suppressed ids.
func TestCompiledStepMatches(t *testing.T) {
	if err := mlx.Available(); err != nil {
		t.Skip("libmlxc not found")
	}
	for _, c := range []struct {
		model    string
		slack    int
		prompt   int // prompt length (0: the golden's)
		steps    int
		suppress bool
	}{
		{"text-tiny", 0, 0, 24, false}, // a ring of 8: wraps
		{"text-tiny", 1024, 0, 24, true},
		{"text-tiny-q4", 0, 0, 24, false},
		{"text-tiny-bf16", 0, 0, 24, false},
		{"text-tiny-bf16", 1024, 0, 24, true},
		{"text-tiny", 3, 250, 12, false}, // 250 + 12 > 256: the full caches grow mid-decode
		// Synthetic checkpoints of the other families, dense and 4-bit.
		{"e4b", 0, 20, 16, false},
		{"12b/4", 0, 20, 16, true},
		{"26b-moe", 0, 20, 16, false},
		{"26b-moe/4", 1024, 20, 16, false},
		{"31b/4", 0, 20, 16, false},
	} {
		t.Run(fmt.Sprintf("%s/slack=%d/prompt=%d", c.model, c.slack, c.prompt), func(t *testing.T) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			b, err := mlx.New()
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			dir, golden := familyDir(t, c.model)
			m, err := gemma4.Load(b, dir)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			m.Text.WindowSlack = c.slack
			s := newStepCompiler(b, m.Text, m.Cfg.Text.VocabSize)
			if s == nil {
				t.Skip("compiled steps unavailable here")
			}
			s.logits = true
			var prompt []int32
			if golden {
				prompt = goldenIDs(t, c.model, "input_ids")
			}
			for len(prompt) < c.prompt {
				prompt = append(prompt, int32(3+len(prompt)*37%1000))
			}
			var suppress tensor.Tensor
			if c.suppress {
				mask := make([]bool, m.Cfg.Text.VocabSize)
				for i := 0; i < len(mask); i += 3 {
					mask[i] = true
				}
				suppress = b.FromBool(mask, []int{len(mask)})
				b.Pin(suppress)
				defer b.Unpin(suppress)
			}
			want := decodeDirect(t, b, m, nil, prompt, c.steps, suppress)
			got := decodeDirect(t, b, m, s, prompt, c.steps, suppress)
			s.opByOp = true
			masked := decodeDirect(t, b, m, s, prompt, c.steps, suppress)
			s.opByOp = false
			if !slices.Equal(got.ids, want.ids) {
				t.Fatalf("compiled ids %v\nwant %v", got.ids, want.ids)
			}
			if golden && c.prompt == 0 && !c.suppress {
				if g := goldenIDs(t, c.model, "generated_ids"); !slices.Equal(got.ids[:len(g)], g) {
					t.Fatalf("compiled ids %v, golden %v", got.ids, g)
				}
			}
			// The replay is the step's own ops, bit for bit.
			for i := range got.logits {
				if !slices.Equal(got.ids, masked.ids) || !bitsEqual(got.logits[i], masked.logits[i]) {
					t.Fatalf("step %d: the replay differs from the same step run op by op", i)
				}
			}
			// Against the sliced caches, attention sums in another order.
			worst, same := 0.0, 0
			for i := range got.logits {
				d, exact := 0.0, true
				for j, v := range got.logits[i] {
					w := want.logits[i][j]
					d = math.Max(d, math.Abs(float64(v-w)))
					exact = exact && math.Float32bits(v) == math.Float32bits(w)
				}
				worst = math.Max(worst, d)
				if exact {
					same++
				}
			}
			t.Logf("%d of %d steps bit-identical, max |d logit| %.3g, %d traces", same, len(got.logits), worst, s.traces())
			if worst > 1e-3 {
				t.Errorf("logits differ by %g", worst)
			}
			if c.prompt+c.steps > 256 && s.traces() < 2 {
				t.Errorf("%d traces: the growth of the full caches was not recorded anew", s.traces())
			}
		})
	}
}

// familyDir is the folder of model: a fixture (golden), or "family[/bits]"
// written as a synthetic checkpoint of that family (synth.Families).
func familyDir(t *testing.T, model string) (dir string, golden bool) {
	t.Helper()
	name, bits, _ := strings.Cut(model, "/")
	if _, ok := synth.Families[name]; !ok {
		return filepath.Join(testdata, "models", model), true
	}
	base, err := os.ReadFile(filepath.Join(testdata, "models", "text-tiny", "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := synth.FamilyConfig(base, name)
	if err != nil {
		t.Fatal(err)
	}
	opt := synth.Options{Seed: 3, Scale: 0.2}
	if bits != "" {
		opt.Bits, _ = strconv.Atoi(bits)
	}
	dir = t.TempDir()
	if err := synth.Write(dir, cfg, opt); err != nil {
		t.Fatal(err)
	}
	return dir, false
}

func bitsEqual(a, b []float32) bool {
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

// traces counts the recordings of all the compiler's steps.
func (s *stepCompiler) traces() int {
	n := 0
	for _, f := range s.fns {
		n += f.Traces()
	}
	return n
}

var _ kvcache.Stepper = (*kvcache.Full)(nil)
var _ kvcache.Stepper = (*kvcache.Window)(nil)
