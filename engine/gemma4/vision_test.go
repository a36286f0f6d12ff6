package gemma4_test

import (
	"testing"

	"perch/engine/gemma4"
	"perch/engine/golden"
	"perch/engine/tensor"
)

// goldenPatches builds tower input from a golden's patches/positions.
func goldenPatches(t *testing.T, g *golden.File, data, pos string) *gemma4.Patches {
	t.Helper()
	d := must(g.F32(data))
	p := must(g.I32(pos))
	n := len(p) / 2
	pp := &gemma4.Patches{Data: d, N: n, Positions: make([][2]int32, n)}
	for i := range pp.Positions {
		pp.Positions[i] = [2]int32{p[2*i], p[2*i+1]}
	}
	return pp
}

func loadVision(t *testing.T, b tensor.Backend, m *gemma4.Model) gemma4.Vision {
	t.Helper()
	v, _, err := gemma4.LoadVision(b, m.Checkpoint(), m.Cfg)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// spliced runs a prompt whose placeholder rows take feats and checks the
// prefill logits and the greedy continuation.
func spliced(t *testing.T, b tensor.Backend, m *gemma4.Model, prompt []int32, placeholder int32, feats tensor.Tensor, blocks []int, wantLogits, wantSteps []float32, wantIDs []int32, atol float64) {
	t.Helper()
	var rows []int
	ple := append([]int32(nil), prompt...)
	for i, id := range prompt {
		if id == placeholder {
			rows = append(rows, i)
			ple[i] = 0
		}
	}
	embeds := must(gemma4.Splice(b, m.Text.Embed(ids(b, prompt)), feats, rows))
	caches := m.Text.NewCaches()
	logits := must(b.Float32s(m.Text.Forward(gemma4.Inputs{Embeds: embeds, PLEIDs: ids(b, ple), VisionBlocks: blocks}, caches)))
	checkClose(t, "prompt logits", logits, wantLogits, atol)
	V := m.Cfg.Text.VocabSize
	last := logits[len(logits)-V:]
	for i, want := range wantIDs {
		checkClose(t, "step logits", last, wantSteps[i*V:(i+1)*V], atol)
		next := argmax(last)
		if next != want {
			t.Fatalf("greedy step %d: %d, want %d", i, next, want)
		}
		last = must(b.Float32s(m.Text.Forward(gemma4.Inputs{IDs: ids(b, []int32{next})}, caches)))
	}
}

func blockIDs(types []int32) []int {
	out := make([]int, len(types))
	block := -1
	for i, ty := range types {
		switch {
		case ty == 1 || ty == 2:
			if i == 0 || (types[i-1] != 1 && types[i-1] != 2) {
				block++
			}
			out[i] = block
		default:
			out[i] = -1
		}
	}
	return out
}

func TestVisionTowerGoldens(t *testing.T) {
	for bn, mk := range backends() {
		t.Run(bn, func(t *testing.T) {
			b := mk()
			m := load(t, b, "text-tiny")
			v := loadVision(t, b, m)
			g := openGolden(t, "vision-tiny")
			want := must(g.F32("image_soft_tokens"))
			feats := must(v.Encode(goldenPatches(t, g, "patches", "patch_positions")))
			checkClose(t, "image soft tokens", must(b.Float32s(feats)), want, 1e-4)

			// The same image padded to 72 patches with (-1, -1) gives the same tokens.
			pp := goldenPatches(t, g, "patches", "patch_positions_padded")
			pp.Data = append(pp.Data, make([]float32, (pp.N-54)*768)...)
			checkClose(t, "padded image soft tokens", must(b.Float32s(must(v.Encode(pp)))), want, 1e-4)

			prompt := must(g.I32("input_ids"))
			spliced(t, b, m, prompt, m.Cfg.ImageTokenID, feats, nil,
				must(g.F32("logits_causal")), must(g.F32("step_logits_causal")), must(g.I32("generated_ids_causal")), 1e-3)

			// With the vision overlay switched on, each image block attends bidirectionally.
			m.Cfg.Text.UseBidirectionalAttention = "vision"
			defer func() { m.Cfg.Text.UseBidirectionalAttention = "" }()
			spliced(t, b, m, prompt, m.Cfg.ImageTokenID, feats, blockIDs(must(g.I32("mm_token_type_ids"))),
				must(g.F32("logits_bidirectional")), must(g.F32("step_logits_bidirectional")), must(g.I32("generated_ids_bidirectional")), 1e-3)
		})
	}
}

func TestUnifiedVisionGoldens(t *testing.T) {
	for bn, mk := range backends() {
		t.Run(bn, func(t *testing.T) {
			b := mk()
			m := load(t, b, "vision-unified-tiny")
			v := loadVision(t, b, m)
			g := openGolden(t, "vision-unified-tiny")
			feats := must(v.Encode(goldenPatches(t, g, "pixel_values", "image_position_ids")))
			checkClose(t, "unified image soft tokens", must(b.Float32s(feats)), must(g.F32("image_soft_tokens")), 5e-4)
			spliced(t, b, m, must(g.I32("image_prompt_ids")), m.Cfg.ImageTokenID, feats, blockIDs(must(g.I32("image_prompt_mm_token_type_ids"))),
				must(g.F32("image_prompt_logits")), must(g.F32("image_prompt_step_logits")), must(g.I32("image_prompt_generated_ids")), 5e-3)
		})
	}
}
