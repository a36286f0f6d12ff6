package synth_test

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"perch/engine/gemma4"
	"perch/engine/gemma4/synth"
)

// TestInventoryMatchesPublished26B: the full-size mlx-community 4-bit
// 26B-A4B inventory synth writes has the published repository's tensor
// count and byte totals (mlx-community/gemma-4-26b-a4b-it-4bit @ 0d77464e:
// 1697 tensors, 15,340,981,404 bytes = BF16 2,717,731,996 + U32
// 12,623,249,408; 355 vision_tower tensors; 270 expert tensors), so its
// names, shapes and dtypes are the real ones.
func TestInventoryMatchesPublished26B(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "published", "mlx-community--gemma-4-26b-a4b-it-4bit", "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	inv, err := synth.Inventory(raw, synth.Options{Bits: 4, BF16: true})
	if err != nil {
		t.Fatal(err)
	}
	bytes := map[string]int64{}
	var total int64
	vision, experts := 0, 0
	for _, ts := range inv {
		bytes[ts.DType] += ts.Bytes()
		total += ts.Bytes()
		if strings.HasPrefix(ts.Name, "vision_tower.") {
			vision++
		}
		if strings.Contains(ts.Name, ".experts.switch_glu.") {
			experts++
		}
	}
	if len(inv) != 1697 || total != 15_340_981_404 || bytes["BF16"] != 2_717_731_996 || bytes["U32"] != 12_623_249_408 || vision != 355 || experts != 270 {
		t.Fatalf("%d tensors, %d bytes (%v), %d vision, %d expert tensors", len(inv), total, bytes, vision, experts)
	}
}

// TestInventoryAudioTower: the E2B conformer plus its projector is 752
// tensors, as in the published checkpoints (12 layers × 62 + 5
// subsampling + 2 output_proj + embed_audio).
func TestInventoryAudioTower(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "published", "mlx-community--gemma-4-e2b-it-bf16", "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	inv, err := synth.Inventory(raw, synth.Options{BF16: true})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ts := range inv {
		if strings.HasPrefix(ts.Name, "audio_tower.") || strings.HasPrefix(ts.Name, "embed_audio.") {
			n++
		}
	}
	if n != 752 {
		t.Fatalf("%d audio tensors, want 752", n)
	}
}

// TestInventoryParameterCounts: the full-size google/* bf16 inventory of
// every family has the parameter counts Google's model card publishes
// (rounded there to 0.1 B): E2B 5.1 B and E4B 8 B with embeddings and
// towers; 26B-A4B 25.2 B (3.8 B active per token: top_k_experts of num_experts routed) and
// 31B 30.7 B without the vision tower. The 12B unified card gives no
// figure; its shapes are checked by the layout tests only.
func TestInventoryParameterCounts(t *testing.T) {
	for _, c := range []struct {
		repo         string
		towers       bool    // the card's figure counts the towers
		total, activ float64 // billions; activ 0: dense
	}{
		{"google--gemma-4-E2B-it", true, 5.1, 0},
		{"google--gemma-4-E4B-it", true, 8.0, 0},
		{"google--gemma-4-26B-A4B-it", false, 25.2, 3.8},
		{"google--gemma-4-31B-it", false, 30.7, 0},
	} {
		raw, err := os.ReadFile(filepath.Join("..", "testdata", "published", c.repo, "config.json"))
		if err != nil {
			t.Fatal(err)
		}
		inv, err := synth.Inventory(raw, synth.Options{Layout: synth.LayoutHF})
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := gemma4.ParseConfig(raw)
		if err != nil {
			t.Fatal(err)
		}
		var total, experts int64
		for _, ts := range inv {
			n := int64(1)
			for _, d := range ts.Shape {
				n *= int64(d)
			}
			tower := strings.Contains(ts.Name, "vision_") || strings.Contains(ts.Name, "audio_") ||
				strings.Contains(ts.Name, "embed_vision") || strings.Contains(ts.Name, "embed_audio")
			if tower && !c.towers {
				continue
			}
			total += n
			if strings.Contains(ts.Name, ".experts.") {
				experts += n
			}
		}
		got := float64(total) / 1e9
		active := float64(total-experts) / 1e9
		if experts > 0 {
			active += float64(experts) * float64(cfg.Text.TopKExperts) / float64(cfg.Text.NumExperts) / 1e9
		}
		t.Logf("%s: %.3f B parameters (%.3f B active)", c.repo, got, active)
		if math.Abs(got-c.total) > 0.05 || (c.activ != 0 && math.Abs(active-c.activ) > 0.05) {
			t.Errorf("%s: %.3f B parameters, %.3f B active; the model card says %.1f B, %.1f B active", c.repo, got, active, c.total, c.activ)
		}
	}
}
