package main

import (
	"bytes"
	"math"
	"path/filepath"
	"testing"

	"perch/engine/golden"
	"perch/engine/mlx"
	"perch/media/npy"
)

const loraTiny = "../testdata/goldens/lora-tiny"

func loraGolden(t *testing.T) *golden.File {
	t.Helper()
	g, err := golden.Open(filepath.Join(loraTiny, "golden.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

func cliBackends(t *testing.T) []string {
	if mlx.Available() == nil {
		return []string{"go", "mlx"}
	}
	t.Log("libmlxc not found: checked on the Go backend only")
	return []string{"go"}
}

// TestAskAdapterReproducesGoldenLogits: perch ask --adapter with the
// fixture's adapter gives its forward logits (atol 2e-4, the README's).
func TestAskAdapterReproducesGoldenLogits(t *testing.T) {
	g := loraGolden(t)
	ids, err := g.I32("forward.input_ids")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := g.F32("forward.logits") // [1, 12, 1024]
	base, _ := g.F32("forward.logits_base")
	V := 1024
	last := want[len(want)-V:]
	for _, backend := range cliBackends(t) {
		for _, withAdapter := range []bool{true, false} {
			dump := filepath.Join(t.TempDir(), "logits.npy")
			args := []string{"--model", tinyModel, "--backend", backend, "--prompt-ids", joinIDs(ids), "--max-tokens", "1",
				"--temperature", "0", "--dump-logits", dump}
			ref := last
			if withAdapter {
				args = append(args, "--adapter", loraTiny)
			} else {
				ref = base[len(base)-V:]
			}
			var out, errOut bytes.Buffer
			if code := runAsk(args, &out, &errOut); code != 0 {
				t.Fatalf("%s: exit %d: %s", backend, code, errOut.String())
			}
			a, err := npy.ReadFile(dump)
			if err != nil {
				t.Fatal(err)
			}
			worst, moved := 0.0, 0.0
			for i, v := range a.F32 {
				worst = math.Max(worst, math.Abs(float64(v-ref[i])))
				moved = math.Max(moved, math.Abs(float64(last[i]-base[len(base)-V+i])))
			}
			if worst > 2e-4 {
				t.Errorf("%s adapter=%v: logits max |diff| %.3g, want <= 2e-4", backend, withAdapter, worst)
			}
			if moved < 0.1 {
				t.Fatalf("the fixture's adapter moves the last logits by only %.3g", moved)
			}
		}
	}
}
