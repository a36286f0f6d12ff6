package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"perch/engine/lora"
	"perch/engine/train"
)

// tinyLoRA is a small adapter shape for the tiny model.
func tinyLoRA() lora.Config {
	c := lora.DefaultConfig()
	c.LoRA.Rank, c.LoRA.Scale = 4, 2
	return c
}

// TestTrainRefusesUpFront: what cannot run is refused by Train itself,
// before anything is queued, with a message that says what to change.
func TestTrainRefusesUpFront(t *testing.T) {
	e := openTiny(t, "text-tiny", Options{Backend: BackendGo})
	data := t.TempDir()
	os.WriteFile(filepath.Join(data, "train.jsonl"), []byte(`{"text": "a b c"}`+"\n"+`{"text": "d e f"}`+"\n"+`{"messages": [{"role": "user", "content": "hi"}]}`+"\n"), 0o644)
	good := func() TrainRequest {
		return TrainRequest{Train: []train.Row{{IDs: []int32{2, 3, 4}, PromptLen: 1}}, Iters: 1, BatchSize: 1,
			LoRA: tinyLoRA(), AdapterDir: filepath.Join(t.TempDir(), "out")}
	}
	cases := map[string]struct {
		edit func(*TrainRequest)
		want string
	}{
		"bad method":      {func(r *TrainRequest) { r.Options.Method = "ppo" }, "unknown training method"},
		"batch too large": {func(r *TrainRequest) { r.BatchSize = 2 }, "fewer than the batch size"},
		"no iterations":   {func(r *TrainRequest) { r.Iters = 0 }, "at least 1 step"},
		"no adapter dir":  {func(r *TrainRequest) { r.AdapterDir = "" }, "no adapter folder"},
		"missing data":    {func(r *TrainRequest) { r.Data = filepath.Join(data, "nope") }, "training data"},
		"malformed data":  {func(r *TrainRequest) { r.Data = data }, "train.jsonl:3: the last message is the user's"},
		"bad resume":      {func(r *TrainRequest) { r.Resume = t.TempDir() }, "adapter_config.json"},
		"bad rank":        {func(r *TrainRequest) { r.LoRA.LoRA.Rank = 0 }, "rank"},
	}
	for name, c := range cases {
		req := good()
		c.edit(&req)
		_, err := e.Train(t.Context(), req)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
	if e.training.Load() {
		t.Error("a refused run left the engine marked as training")
	}
}
