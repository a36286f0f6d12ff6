package train

import (
	"path/filepath"
	"slices"
	"testing"
)

// methodRun trains the tiny model from a JSONL folder with extra flags and
// checks that the training and validation losses go down and that the
// adapter changes perch ask's answer. It returns the step lines.
func methodRun(t *testing.T, method string, rows func(int) []any, extra ...string) []map[string]any {
	t.Helper()
	data := t.TempDir()
	writeJSONL(t, data, "train.jsonl", rows(8)...)
	writeJSONL(t, data, "valid.jsonl", rows(2)...)
	out := filepath.Join(t.TempDir(), "adapter")
	args := append([]string{"--model", tinyModel, "--backend", "go", "--data", data, "--method", method,
		"--iters", "30", "--batch-size", "2", "--learning-rate", "3e-3", "--lora-rank", "4", "--lora-scale", "2",
		"--val-every", "10", "--save-every", "0", "--seed", "7", "--adapter-path", out, "--json"}, extra...)
	lines := trainLines(t, args...)
	steps, vals := lines["step"], lines["validation"]
	first, last := steps[0]["loss"].(float64), steps[len(steps)-1]["loss"].(float64)
	v0, vN := vals[0]["val_loss"].(float64), vals[len(vals)-1]["val_loss"].(float64)
	t.Logf("%s: train loss %.4f -> %.4f, validation %.4f -> %.4f", method, first, last, v0, vN)
	if !(last < first) || !(vN < v0) {
		t.Errorf("%s: the loss did not go down: train %v -> %v, validation %v -> %v", method, first, last, v0, vN)
	}
	if tuned := askIDs(t, out); slices.Equal(tuned, askIDs(t, "")) {
		t.Errorf("%s: the adapter did not change the answer: %v", method, tuned)
	}
	return steps
}
