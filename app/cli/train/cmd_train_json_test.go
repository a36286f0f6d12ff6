package train

import (
	"testing"
)

// TestTrainJSONStepLines: --json step lines carry the learning rate and
// the speed, as metrics.jsonl does, and the speed counts the same tokens
// as "tokens".
func TestTrainJSONStepLines(t *testing.T) {
	data := t.TempDir()
	writeJSONL(t, data, "train.jsonl", teachRows(4)...)
	lines := trainLines(t, "--model", tinyModel, "--backend", "go", "--data", data, "--iters", "3", "--batch-size", "2",
		"--learning-rate", "3e-4", "--lora-rank", "2", "--save-every", "0", "--adapter-path", t.TempDir(), "--json")
	for _, l := range lines["step"] {
		lr, _ := l["learning_rate"].(float64)
		tps, _ := l["tokens_per_s"].(float64)
		tokens, _ := l["tokens"].(float64)
		if lr != 3e-4 || !(tps > 0) || tokens <= 0 {
			t.Errorf("step line %v", l)
		}
	}
}
