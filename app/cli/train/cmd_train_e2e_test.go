package train

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"perch/engine/train"
)

// teachRows are chat rows that teach the tiny model one answer.
func teachRows(n int) []any {
	var rows []any
	for i := 0; i < n; i++ {
		rows = append(rows, map[string]any{"messages": []map[string]any{
			{"role": "user", "content": fmt.Sprintf("Question %d: which bird?", i)},
			{"role": "assistant", "content": "A robin sings."},
		}})
	}
	return rows
}

func prefRows(n int) []any {
	var rows []any
	for i := 0; i < n; i++ {
		rows = append(rows, map[string]any{"prompt": fmt.Sprintf("Question %d: which bird?", i),
			"chosen": "A robin sings.", "rejected": "No idea, sorry."})
	}
	return rows
}

// askIDs is perch ask's greedy answer, with or without an adapter.
func askIDs(t *testing.T, adapter string) []int32 {
	t.Helper()
	args := []string{"--model", tinyModel, "--backend", "go", "--temperature", "0", "--max-tokens", "8", "--ignore-eos", "--json"}
	if adapter != "" {
		args = append(args, "--adapter", adapter)
	}
	var out, errOut bytes.Buffer
	if code := runAsk(append(args, "Question 99: which bird?"), &out, &errOut); code != 0 {
		t.Fatalf("perch ask: exit %d: %s", code, errOut.String())
	}
	var done struct {
		TokenIDs []int32 `json:"token_ids"`
	}
	for _, l := range bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n")) {
		if bytes.Contains(l, []byte(`"type":"done"`)) {
			json.Unmarshal(l, &done)
		}
	}
	return done.TokenIDs
}

// TestTrainEndToEnd: from a JSONL folder, for each method: the loss goes
// down, checkpoints and metrics.json are written, and the adapter reloads
// and changes perch ask's answer.
func TestTrainEndToEnd(t *testing.T) {
	base := askIDs(t, "")
	for _, c := range []struct {
		method string
		rows   func(int) []any
	}{{"sft", teachRows}, {"dpo", prefRows}, {"orpo", prefRows}} {
		t.Run(c.method, func(t *testing.T) {
			data := t.TempDir()
			writeJSONL(t, data, "train.jsonl", c.rows(8)...)
			writeJSONL(t, data, "valid.jsonl", c.rows(2)...)
			out := filepath.Join(t.TempDir(), "adapter")
			lines := trainLines(t, "--model", tinyModel, "--backend", "go", "--data", data, "--method", c.method,
				"--iters", "30", "--batch-size", "2", "--learning-rate", "3e-3", "--lora-rank", "4", "--lora-scale", "2",
				"--val-every", "10", "--save-every", "10", "--seed", "7", "--adapter-path", out, "--json")
			steps := lines["step"]
			first, last := steps[0]["loss"].(float64), steps[len(steps)-1]["loss"].(float64)
			vals := lines["validation"]
			v0, vN := vals[0]["val_loss"].(float64), vals[len(vals)-1]["val_loss"].(float64)
			t.Logf("%s: train loss %.4f -> %.4f, validation %.4f -> %.4f", c.method, first, last, v0, vN)
			if !(last < first) || !(vN < v0) || len(vals) != 4 {
				t.Errorf("the loss did not go down: train %v -> %v, validation %v -> %v (%d validations)", first, last, v0, vN, len(vals))
			}
			m, err := train.ReadMetrics(out)
			if err != nil || !m.Finished || len(m.Checkpoints) != 3 || m.Best == nil {
				t.Fatalf("metrics.json %+v %v", m, err)
			}
			for _, ck := range m.Checkpoints {
				if _, err := os.Stat(filepath.Join(out, ck.Path, "adapters.safetensors")); err != nil {
					t.Errorf("checkpoint %s: %v", ck.Path, err)
				}
			}
			tuned := askIDs(t, out)
			if slices.Equal(tuned, base) {
				t.Errorf("the adapter did not change the answer: %v", tuned)
			}
			if best := askIDs(t, filepath.Join(out, m.Best.Path)); len(best) == 0 {
				t.Error("the best checkpoint does not load")
			}
		})
	}
}

// TestImageRowTrains: a chat row with a photo goes through the processor
// and the frozen vision tower (another photo gives another loss), and its
// loss goes down.
func TestImageRowTrains(t *testing.T) {
	img, err := os.ReadFile("../../../testdata/goldens/vision-tiny/image.png")
	if err != nil {
		t.Fatal(err)
	}
	var grey bytes.Buffer
	g := image.NewGray(image.Rect(0, 0, 144, 96)) // the bird photo's size: the same soft-token count
	for i := range g.Pix {
		g.Pix[i] = 128
	}
	png.Encode(&grey, g)
	first := map[string]float64{}
	for name, photo := range map[string][]byte{"bird": img, "grey": grey.Bytes()} {
		data := t.TempDir()
		os.WriteFile(filepath.Join(data, "photo.png"), photo, 0o644)
		row := map[string]any{"messages": []map[string]any{
			{"role": "user", "content": []map[string]any{{"type": "image", "image": "photo.png"}, {"type": "text", "text": "Which bird?"}}},
			{"role": "assistant", "content": "A robin."},
		}}
		writeJSONL(t, data, "train.jsonl", row)
		lines := trainLines(t, "--model", tinyModel, "--backend", "go", "--data", data, "--iters", "5", "--batch-size", "1",
			"--learning-rate", "3e-3", "--lora-rank", "4", "--lora-scale", "2", "--save-every", "0", "--val-every", "0",
			"--adapter-path", filepath.Join(t.TempDir(), "adapter"), "--json")
		steps := lines["step"]
		l0, l4 := steps[0]["loss"].(float64), steps[len(steps)-1]["loss"].(float64)
		t.Logf("%s photo: loss %.4f -> %.4f", name, l0, l4)
		if !(l4 < l0) {
			t.Errorf("%s photo: loss %v -> %v", name, l0, l4)
		}
		first[name] = l0
	}
	if first["bird"] == first["grey"] {
		t.Errorf("two photos give the same loss %v: the image did not reach the model", first["bird"])
	}
}
