package teach

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"perch/app/history"
	"perch/app/teach/dataset"
	"perch/engine/chattemplate"
	"perch/engine/tokenizer"
	"perch/engine/train"
	"perch/engine/trainset"
	"perch/ui"
)

// exportData writes the plan's rows as a dataset folder (ExportDataset)
// and returns it.
func exportData(t *testing.T, f *fixture, plan ui.TrainPlan) (string, error) {
	dir := filepath.Join(t.TempDir(), "data")
	return dir, f.svc.ExportDataset(plan, dir)
}

func readLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, m)
	}
	return out
}

func TestCorrectionMakesAPreferencePairWithItsPhoto(t *testing.T) {
	f := newFixture(t, "")
	c, _ := f.store.CreateConversation("Birds", "")
	photo, err := f.store.PutBlob([]byte("\x89PNG fake bird"), history.Attachment{Name: "robin.png", Kind: "image", MIME: "image/png"})
	if err != nil {
		t.Fatal(err)
	}
	a := f.chatTurn(c.ID, "What bird is this?", "A sparrow.", photo)
	f.store.SetRating(a.ID, a.Version, -1)
	f.correct(&a, "A robin: see the red breast.")
	// A liked answer elsewhere is an example; a dislike with no better version is counted apart.
	liked := f.chatTurn(c.ID, "Thanks! Where do they live?", "In gardens and woods.")
	f.store.SetRating(liked.ID, liked.Version, 1)
	bad := f.chatTurn(c.ID, "Do they migrate?", "Never, anywhere.")
	f.store.SetRating(bad.ID, bad.Version, -1)
	f.chatTurn(c.ID, "Unrated question", "Unrated answer.")

	rows, err := dataset.FromFeedback(f.store, "Be brief.")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows.Pairs) != 1 || len(rows.Examples) != 2 || rows.Unpaired != 1 {
		t.Fatalf("pairs %d examples %d unpaired %d", len(rows.Pairs), len(rows.Examples), rows.Unpaired)
	}
	p := rows.Pairs[0]
	if p.Chosen != "A robin: see the red breast." || p.Rejected != "A sparrow." || p.Origin != "your correction" || p.Media() != 1 {
		t.Fatalf("pair %+v", p)
	}
	if p.Prompt[0].Role != "system" || p.Prompt[0].Text != "Be brief." || p.Prompt[1].Text != "What bird is this?" {
		t.Fatalf("prompt %+v", p.Prompt)
	}
	// The second example's prompt carries the conversation before it, with the corrected answer.
	ex := rows.Examples[1]
	if len(ex.Prompt) != 4 || ex.Prompt[2].Text != "A robin: see the red breast." || ex.Chosen != "In gardens and woods." {
		t.Fatalf("example %+v", ex)
	}

	sum, err := f.svc.Summarize(ui.TeachSource{Feedback: true}, 0)
	if err != nil || sum.Pairs != 1 || sum.Examples != 2 || sum.Unpaired != 1 || sum.Media != 2 || len(sum.Preview) != 3 {
		t.Fatalf("summary %+v, %v", sum, err)
	}

	// The dataset folder is mlx-lm's DPO format, the photo beside it.
	plan := defaultPlan()
	plan.ValShare = 0
	dir, err := exportData(t, f, plan)
	if err != nil {
		t.Fatal(err)
	}
	lines := readLines(t, filepath.Join(dir, "train.jsonl"))
	if len(lines) != 1 || lines[0]["chosen"] != "A robin: see the red breast." || lines[0]["rejected"] != "A sparrow." {
		t.Fatalf("train.jsonl %v", lines)
	}
	user := lines[0]["prompt"].([]any)[0].(map[string]any)
	parts := user["content"].([]any)
	img := parts[0].(map[string]any)
	if img["type"] != "image" || parts[1].(map[string]any)["text"] != "What bird is this?" {
		t.Fatalf("user turn %v", user)
	}
	data, err := os.ReadFile(filepath.Join(dir, img["image"].(string)))
	if err != nil || string(data) != "\x89PNG fake bird" {
		t.Fatalf("the photo did not travel with the pair: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "valid.jsonl")); !os.IsNotExist(err) {
		t.Fatal("valid.jsonl written with no validation share")
	}
}

// The engine's own loader reads what Perch writes (text rows; the tiny
// model's template and tokenizer).
func TestEngineReadsTheDataset(t *testing.T) {
	f := newFixture(t, "")
	for i := 0; i < 6; i++ {
		c, _ := f.store.CreateConversation("c", "")
		a := f.chatTurn(c.ID, "Say something kind", "Whatever.")
		f.correct(&a, "You are doing great today.")
	}
	tmpl, err := chattemplate.Load(tinyModel)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.Load(tinyModel)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []ui.TrainMethod{ui.MethodSFT, ui.MethodDPO, ui.MethodORPO} {
		plan := defaultPlan()
		plan.Method, plan.ValShare = m, 0.2
		dir, err := exportData(t, f, plan)
		if err != nil {
			t.Fatal(err)
		}
		enc := &trainset.Encoder{Template: tmpl, Tok: tok, Method: train.Method(m), MaxLen: 512}
		ds, err := trainset.LoadFolder(context.Background(), dir, enc)
		if err != nil {
			t.Fatalf("%s: the engine refused the dataset: %v", m, err)
		}
		if len(ds.Train.Rows) != 5 || ds.Valid == nil || len(ds.Valid.Rows) != 1 {
			t.Fatalf("%s: %d train rows, valid %v", m, len(ds.Train.Rows), ds.Valid)
		}
		r := ds.Train.Rows[0]
		if (m == ui.MethodSFT) != (r.IDs != nil) || (m != ui.MethodSFT && (len(r.Chosen) == 0 || len(r.Rejected) == 0)) {
			t.Fatalf("%s: row %+v", m, r)
		}
		// The rows a run takes straight (no file on the way) are the
		// exported file's rows, token for token.
		d, err := f.svc.rowsFor(plan)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			exs  []trainset.Example
			want *trainset.Split
		}{{d.train, ds.Train}, {d.valid, ds.Valid}} {
			got, err := trainset.EncodeExamples(context.Background(), "rows", c.exs, enc, nil)
			if err != nil {
				t.Fatalf("%s: %v", m, err)
			}
			if len(got.Rows) != len(c.want.Rows) {
				t.Fatalf("%s: %d rows straight, %d from the file", m, len(got.Rows), len(c.want.Rows))
			}
			for k, r := range got.Rows {
				w := c.want.Rows[k]
				if !slices.Equal(r.IDs, w.IDs) || r.PromptLen != w.PromptLen || !slices.Equal(r.Prompt, w.Prompt) ||
					!slices.Equal(r.Chosen, w.Chosen) || !slices.Equal(r.Rejected, w.Rejected) {
					t.Fatalf("%s: row %d differs from the exported file's", m, k)
				}
			}
		}
	}
}

func TestFolderIsCountedAndMerged(t *testing.T) {
	f := newFixture(t, "")
	folder := t.TempDir()
	os.MkdirAll(filepath.Join(folder, "pics"), 0o755)
	os.WriteFile(filepath.Join(folder, "train.jsonl"), []byte(strings.Join([]string{
		`{"messages": [{"role": "user", "content": [{"type": "image", "image": "pics/a.jpg"}, {"type": "text", "text": "What is it?"}]}, {"role": "assistant", "content": "A cat."}]}`,
		`{"prompt": "Hi", "completion": "Hello!"}`,
		``,
		`{"text": "Plain text row."}`,
		`{"prompt": "Pick", "chosen": "Good", "rejected": "Bad"}`,
	}, "\n")), 0o644)
	sum, err := f.svc.Summarize(ui.TeachSource{Folder: folder}, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Examples != 3 || sum.Pairs != 1 || sum.Media != 1 || len(sum.Preview) != 3 || sum.Preview[0].Chosen != "A cat." || sum.Preview[0].Media != 1 || len(sum.Notes) != 1 {
		t.Fatalf("summary %+v", sum)
	}
	plan := defaultPlan()
	plan.Method, plan.Source = ui.MethodSFT, ui.TeachSource{Folder: folder}
	dir, err := exportData(t, f, plan)
	if err != nil {
		t.Fatal(err)
	}
	train := readLines(t, filepath.Join(dir, "train.jsonl"))
	valid := readLines(t, filepath.Join(dir, "valid.jsonl"))
	if len(train)+len(valid) != 3 || len(valid) != 1 {
		t.Fatalf("train %d valid %d", len(train), len(valid))
	}
	img := train[0]["messages"].([]any)[0].(map[string]any)["content"].([]any)[0].(map[string]any)["image"]
	if img != filepath.Join(folder, "pics/a.jpg") {
		t.Fatalf("media path not made absolute: %v", img)
	}

	for name, body := range map[string]string{
		"train.jsonl:2: not a JSON object": "{\"text\": \"ok\"}\n{broken\n",
		"train.jsonl:1: no known format":   "{\"foo\": 1}\n",
		"a preference row needs":           "{\"chosen\": \"x\", \"rejected\": \"y\"}\n",
	} {
		os.WriteFile(filepath.Join(folder, "train.jsonl"), []byte(body), 0o644)
		if _, err := f.svc.Summarize(ui.TeachSource{Folder: folder}, 0); err == nil || !strings.Contains(err.Error(), name) {
			t.Fatalf("want %q, got %v", name, err)
		}
	}
	if _, err := f.svc.Summarize(ui.TeachSource{Folder: t.TempDir()}, 0); err == nil || !strings.Contains(err.Error(), "no train.jsonl") {
		t.Fatalf("empty folder: %v", err)
	}
}
