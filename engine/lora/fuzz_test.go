package lora_test

import (
	"os"
	"path/filepath"
	"testing"

	"perch/engine/lora"
)

// FuzzParse: hostile adapter files get an error, never a panic, and what
// parses satisfies the checks Load promises.
func FuzzParse(f *testing.F) {
	cfg, err := os.ReadFile(filepath.Join(fixtureDir, lora.ConfigFile))
	if err != nil {
		f.Fatal(err)
	}
	w, err := os.ReadFile(filepath.Join(fixtureDir, lora.WeightsFile))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(cfg, w[:4096])
	f.Add([]byte(`{"lora_parameters": {"rank": 2, "scale": 1, "keys": ["layers.1.mlp.up_proj"]}}`), []byte{8, 0, 0, 0, 0, 0, 0, 0, '{', '}'})
	f.Fuzz(func(t *testing.T, cfg, weights []byte) {
		if c, err := lora.ParseConfig(cfg); err == nil {
			if c.LoRA.Rank < 1 || c.FineTuneType != "lora" {
				t.Fatalf("accepted %+v", c)
			}
		}
		leaves, err := lora.ParseWeights(weights, "fuzz")
		if err != nil {
			return
		}
		for n, l := range leaves {
			if len(l.Shape) != 2 || l.Shape[0]*l.Shape[1] != len(l.Data) {
				t.Fatalf("%s: shape %v with %d values", n, l.Shape, len(l.Data))
			}
		}
	})
}
