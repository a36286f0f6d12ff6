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
	for _, want := range []string{`"version":1`, `"learning_rate":0.00001`, `"method":"dpo"`, `"folder":"/data/x"`} {
		if !strings.Contains(raw, want) {
			t.Errorf("stored plan %s lacks %s", raw, want)
		}
	}
	got, err := decodePlan(raw)
	if err != nil || got != p {
		t.Fatalf("read back %+v, %v; want %+v", got, err, p)
	}
}

// A run stored by an older Perch (the untagged plan, no version) still
// reads; a plan from a newer Perch is refused in words.
func TestPlanReadsOlderAndRefusesNewerVersions(t *testing.T) {
	old := `{"Base":"tiny","Name":"my-style","Method":"dpo","Steps":30,"Rank":8,"BatchSize":1,"MaxSeqLen":512,"LearningRate":1e-5,"LoRAPlusRatio":16,"Source":{"Feedback":true}}`
	p, err := decodePlan(old)
	want := ui.TrainPlan{Base: "tiny", Name: "my-style", Method: ui.MethodDPO, Steps: 30, Rank: 8, BatchSize: 1, MaxSeqLen: 512,
		LearningRate: 1e-5, LoRAPlusRatio: 16, Source: ui.TeachSource{Feedback: true}}
	if err != nil || p != want {
		t.Fatalf("version 0 read as %+v, %v; want %+v", p, err, want)
	}
	if _, err := decodePlan(`{"version":2,"base":"tiny","steps":30}`); err == nil || !strings.Contains(err.Error(), "update Perch") {
		t.Fatalf("a newer plan: %v, want a refusal that says to update", err)
	}
	if _, err := decodePlan(`{"version":`); err == nil {
		t.Fatal("a cut plan read without error")
	}
}
