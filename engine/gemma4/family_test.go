package gemma4_test

import (
	"os"
	"path/filepath"
	"testing"

	"perch/engine/gemma4"
	"perch/engine/gemma4/synth"
	"perch/engine/gocpu"
	"perch/engine/safetensors"
)

// familyConfig is the fixture's config turned into a tiny config of the
// family name (synth.Families).
func familyConfig(t *testing.T, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testdata, "models", "text-tiny", "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := synth.FamilyConfig(raw, name)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestFamiliesCacheConsistency: for every family, dense and 4-bit, plain and
// fast kernels agree, and prefill n == prefill n-1 + decode 1 past the window.
func TestFamiliesCacheConsistency(t *testing.T) {
	seq := []int32{2, 485, 494, 539, 301, 688, 630, 971, 759, 337, 479, 537, 34, 448, 774, 125, 305, 221, 13, 21}
	for name := range synth.Families {
		for _, bits := range []int{0, 4} {
			dir := t.TempDir()
			if err := synth.Write(dir, familyConfig(t, name), synth.Options{Bits: bits, Seed: 3, Scale: 0.2}); err != nil {
				t.Fatal(err)
			}
			plain, fast := gocpu.New(gocpu.Options{Plain: true}), gocpu.New(gocpu.Options{})
			mp, err := gemma4.Load(plain, dir)
			if err != nil {
				t.Fatalf("%s/%d-bit: %v", name, bits, err)
			}
			mf := must(gemma4.Load(fast, dir))
			if len(mp.Unknown) != 0 {
				t.Fatalf("%s: unknown tensors %v", name, mp.Unknown)
			}
			for _, n := range []int{6, 13, 20} {
				all := must(fast.Float32s(mf.Text.Forward(gemma4.Inputs{IDs: ids(fast, seq[:n]), LastOnly: true}, mf.Text.NewCaches())))
				ref := must(plain.Float32s(mp.Text.Forward(gemma4.Inputs{IDs: ids(plain, seq[:n]), LastOnly: true}, mp.Text.NewCaches())))
				checkClose(t, name+" fast vs plain", all, ref, 1e-4)
				cs := mf.Text.NewCaches()
				mf.Text.Forward(gemma4.Inputs{IDs: ids(fast, seq[:n-1])}, cs)
				step := must(fast.Float32s(mf.Text.Forward(gemma4.Inputs{IDs: ids(fast, seq[n-1:n])}, cs)))
				checkClose(t, name+" prefill n vs n-1 + decode", step, all, 1e-4)
			}
			mp.Close()
			mf.Close()
		}
	}
}

// TestUnknownTensorsReported: a tensor no config field asks for is listed.
func TestUnknownTensorsReported(t *testing.T) {
	dir := t.TempDir()
	if err := synth.Write(dir, familyConfig(t, "31b"), synth.Options{Seed: 1}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "model.safetensors")
	m, err := safetensors.Map(path)
	if err != nil {
		t.Fatal(err)
	}
	var ts []safetensors.Tensor
	for _, n := range m.Names() {
		ti := m.Tensors[n]
		ts = append(ts, safetensors.Tensor{Name: n, DType: ti.DType, Shape: ti.Shape, Data: append([]byte(nil), m.Bytes(ti)...)})
	}
	m.Close()
	ts = append(ts, safetensors.Tensor{Name: "language_model.model.layers.0.mystery.weight", DType: "F32", Shape: []int{1}, Data: make([]byte, 4)})
	if err := safetensors.Write(path, ts, nil); err != nil {
		t.Fatal(err)
	}
	model, err := gemma4.Load(gocpu.New(gocpu.Options{}), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer model.Close()
	if len(model.Unknown) != 1 || model.Unknown[0] != "language_model.model.layers.0.mystery.weight" {
		t.Fatalf("unknown tensors %v", model.Unknown)
	}
}

// TestSynthTowers: a synthetic checkpoint of the fixture's full config
// (text, vision and audio) loads with every tensor used.
func TestSynthTowers(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(testdata, "models", "text-tiny", "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := synth.Write(dir, raw, synth.Options{Bits: 4, Seed: 2}); err != nil {
		t.Fatal(err)
	}
	m, err := gemma4.Load(gocpu.New(gocpu.Options{}), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.Vision == nil || m.Audio == nil || len(m.Unknown) != 0 {
		t.Fatalf("vision %v, audio %v, unknown %v", m.Vision != nil, m.Audio != nil, m.Unknown)
	}
}
