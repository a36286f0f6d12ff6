package teach

import (
	"strings"
	"testing"

	"perch/ui"
)

func TestPlanRoundTripsAsTaggedVersionedJSON(t *testing.T) {
	p := ui.TrainPlan{Base: "mlx-community/gemma-4-e2b-it-4bit", Name: "my-style", Source: ui.TeachSource{Feedback: true, Folder: "/data/x"},
		Method: ui.MethodDPO, Rank: 8, Steps: 60, LearningRate: 1e-5, LoRAPlusRatio: 16, ValShare: 0.1, BatchSize: 2, MaxSeqLen: 512, Beta: 0.2}
	raw := encodePlan(p)
	for _, want := range []string{`"version":1`, `"reader":1`, `"learning_rate":0.00001`, `"method":"dpo"`, `"folder":"/data/x"`} {
		if !strings.Contains(raw, want) {
			t.Errorf("stored plan %s lacks %s", raw, want)
		}
	}
	got, err := decodePlan(raw)
	if err != nil || got != p {
		t.Fatalf("read back %+v, %v; want %+v", got, err, p)
	}
}

// Plans an older Perch stored read: the untagged plan of before versions
// (version 0) and version 1 as it was first written, without a reader.
func TestPlanReadsOlderVersions(t *testing.T) {
	want := ui.TrainPlan{Base: "tiny", Name: "my-style", Method: ui.MethodDPO, Steps: 30, Rank: 8, BatchSize: 1, MaxSeqLen: 512,
		LearningRate: 1e-5, LoRAPlusRatio: 16, Source: ui.TeachSource{Feedback: true}, Beta: 0.1}
	for name, raw := range map[string]string{
		"version 0": `{"Base":"tiny","Name":"my-style","Method":"dpo","Steps":30,"Rank":8,"BatchSize":1,"MaxSeqLen":512,"LearningRate":1e-5,"LoRAPlusRatio":16,"Beta":0.1,"Source":{"Feedback":true}}`,
		"version 1 without a reader": `{"version":1,"base":"tiny","name":"my-style","feedback":true,"method":"dpo","rank":8,"steps":30,"learning_rate":0.00001,` +
			`"lora_plus_ratio":16,"val_share":0,"batch_size":1,"max_seq_len":512,"beta":0.1}`,
	} {
		if p, err := decodePlan(raw); err != nil || p != want {
			t.Errorf("%s read as %+v, %v; want %+v", name, p, err, want)
		}
	}
}

// A newer Perch's plan that only adds fields reads here: the fields this
// Perch knows, the others ignored. One whose reader is newer than this
// Perch is refused in words.
func TestPlanReadsNewerFieldsAndRefusesANewerReader(t *testing.T) {
	fields := `"base":"tiny","name":"my-style","feedback":true,"method":"sft","rank":4,"steps":40,"learning_rate":0.0002,` +
		`"lora_plus_ratio":16,"val_share":0.2,"batch_size":2,"max_seq_len":256,` +
		`"warmup_steps":10,"schedule":{"kind":"cosine","floor":0.1},"sources":[{"conversation":"c1"}],"dropout":0.05`
	want := ui.TrainPlan{Base: "tiny", Name: "my-style", Source: ui.TeachSource{Feedback: true}, Method: ui.MethodSFT, Rank: 4, Steps: 40,
		LearningRate: 2e-4, LoRAPlusRatio: 16, ValShare: 0.2, BatchSize: 2, MaxSeqLen: 256}
	for _, head := range []string{`"version":2`, `"version":2,"reader":1`, `"version":7,"reader":1`} {
		p, err := decodePlan("{" + head + "," + fields + "}")
		if err != nil || p != want {
			t.Errorf("{%s, …} read as %+v, %v; want %+v", head, p, err, want)
		}
	}
	_, err := decodePlan(`{"version":3,"reader":2,` + fields + `}`)
	if err == nil || !strings.Contains(err.Error(), "newer Perch (plan version 3)") || !strings.Contains(err.Error(), "update Perch") {
		t.Fatalf("a plan that needs a newer reader: %v, want a refusal that says to update", err)
	}
	for _, bad := range []string{`{"version":`, `{"version":0,"base":"tiny"}`, `{"version":2,"reader":3}`, `{"version":1,"reader":-1}`,
		`{"version":"1"}`, `[1]`, `{"version":1,"steps":"ten"}`, `{"version":1,"base":"` + strings.Repeat("x", maxPlanBytes) + `"}`} {
		if _, err := decodePlan(bad); err == nil {
			t.Errorf("%.60s… read without error", bad)
		}
	}
}

// FuzzDecodePlan: any stored bytes read or fail in words, never panic; what
// reads writes back and reads again the same.
func FuzzDecodePlan(f *testing.F) {
	f.Add(encodePlan(ui.TrainPlan{Base: "tiny", Method: ui.MethodDPO, Steps: 3}))
	f.Add(`{"Base":"tiny","Steps":30,"Source":{"Feedback":true}}`)
	f.Add(`{"version":3,"reader":2,"base":"tiny"}`)
	f.Add(`{"version":2,"base":"tiny","extra":[1,{"a":null}]}`)
	f.Fuzz(func(t *testing.T, raw string) {
		p, err := decodePlan(raw)
		if err != nil {
			return
		}
		again, err := decodePlan(encodePlan(p))
		if err != nil {
			t.Fatalf("%q read, but its re-encoding does not: %v", raw, err)
		}
		if again != p {
			t.Fatalf("%q read as %+v, re-read as %+v", raw, p, again)
		}
	})
}
