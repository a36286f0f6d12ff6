package synth_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
