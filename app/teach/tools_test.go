package teach

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	"perch/app/history"
	"perch/app/teach/dataset"
	"perch/engine/chattemplate"
	"perch/engine/tokenizer"
	"perch/engine/train"
	"perch/engine/trainset"
	"perch/ui"
)

// toolAnswer stores a question and an answer that called a tool first.
func (f *fixture) toolAnswer(convID, q, result, a string) history.Message {
	f.t.Helper()
	m := f.chatTurn(convID, q, a)
	m.Tools = []history.ToolRound{{Calls: []history.ToolCall{{ID: "c0", Name: "add", Server: "calculator", Tool: "add",
		Arguments: json.RawMessage(`{"a":2,"b":3}`), Content: result, Done: true}}}}
	if err := f.store.Update(&m); err != nil {
		f.t.Fatal(err)
	}
	return m
}

// TestAnswersThatUsedToolsTrainWithTheirToolTurns: a liked or corrected
// answer that called a tool becomes a row whose prompt ends with the call
// and its result (the answer is learned after them); the dataset carries
// them as OpenAI tool_calls / tool turns, and the engine's loader, with
// the model's chat template, reads every method's rows.
func TestAnswersThatUsedToolsTrainWithTheirToolTurns(t *testing.T) {
	f := newFixture(t, "")
	for i := 0; i < 5; i++ {
		c, _ := f.store.CreateConversation("sums", "")
		a := f.toolAnswer(c.ID, "What is 2 + 3?", "5", "It is six.")
		f.store.SetRating(a.ID, a.Version, -1)
		b := a
		f.correct(&b, "2 + 3 is 5.")
	}
	rows, err := dataset.FromFeedback(f.store, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows.Examples) != 5 || len(rows.Pairs) != 5 {
		t.Fatalf("examples %d, pairs %d", len(rows.Examples), len(rows.Pairs))
	}
	p := rows.Examples[0].Prompt
	if len(p) != 3 || p[0].Role != "user" || p[1].Role != "assistant" || len(p[1].Calls) != 1 || p[1].Calls[0].Name != "add" ||
		p[2].Role != "tool" || p[2].Text != "5" || p[2].Result == nil || p[2].Result.ID != "c0" {
		t.Fatalf("prompt %+v", p)
	}
	// The correction kept the calls its version was made after.
	if rows.Examples[0].Chosen != "2 + 3 is 5." || len(rows.Rated) != 10 || len(rows.Rated[0].Prompt) != 3 {
		t.Fatalf("example %+v; rated %d", rows.Examples[0], len(rows.Rated))
	}

	tmpl, err := chattemplate.Load(tinyModel)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.Load(tinyModel)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []ui.TrainMethod{ui.MethodSFT, ui.MethodDPO} {
		plan := defaultPlan()
		plan.Method, plan.ValShare = m, 0
		dir, err := exportData(t, f, plan)
		if err != nil {
			t.Fatal(err)
		}
		lines := readLines(t, filepath.Join(dir, "train.jsonl"))
		msgs, _ := lines[0]["messages"].([]any)
		if m != ui.MethodSFT {
			msgs, _ = lines[0]["prompt"].([]any)
		}
		if len(msgs) < 3 || msgs[1].(map[string]any)["tool_calls"] == nil || msgs[2].(map[string]any)["tool_call_id"] != "c0" {
			t.Fatalf("%s line %v", m, lines[0])
		}
		enc := &trainset.Encoder{Template: tmpl, Tok: tok, Method: train.Method(m), MaxLen: 512}
		ds, err := trainset.LoadFolder(context.Background(), dir, enc)
		if err != nil {
			t.Fatalf("%s: the engine refused the rows with tool turns: %v", m, err)
		}
		// A run takes the same rows straight, tool turns included, token
		// for token as the exported file's.
		d, err := f.svc.rowsFor(plan)
		if err != nil {
			t.Fatal(err)
		}
		got, err := trainset.EncodeExamples(context.Background(), "rows", d.train, enc, nil)
		if err != nil {
			t.Fatalf("%s: rows with tool turns refused on the way to training: %v", m, err)
		}
		if len(got.Rows) != len(ds.Train.Rows) || len(got.Rows) == 0 {
			t.Fatalf("%s: %d rows straight, %d from the file", m, len(got.Rows), len(ds.Train.Rows))
		}
		for k, r := range got.Rows {
			w := ds.Train.Rows[k]
			if !slices.Equal(r.IDs, w.IDs) || !slices.Equal(r.Prompt, w.Prompt) || !slices.Equal(r.Chosen, w.Chosen) || !slices.Equal(r.Rejected, w.Rejected) {
				t.Fatalf("%s: row %d with tool turns differs from the exported file's", m, k)
			}
		}
	}
}

// TestToolTurnsLeaveRowsWithPhotos: the trainer takes media or tool turns,
// not both; a row with a photo keeps the answers' text only.
func TestToolTurnsLeaveRowsWithPhotos(t *testing.T) {
	f := newFixture(t, "")
	c, _ := f.store.CreateConversation("c", "")
	photo, err := f.store.PutBlob([]byte("\x89PNG fake"), history.Attachment{Name: "sum.png", Kind: "image", MIME: "image/png"})
	if err != nil {
		t.Fatal(err)
	}
	f.chatTurn(c.ID, "Look at this sum", "I see it.", photo)
	a := f.toolAnswer(c.ID, "What is it?", "5", "Five.")
	f.store.SetRating(a.ID, a.Version, 1)
	rows, err := dataset.FromFeedback(f.store, "")
	if err != nil || len(rows.Examples) != 1 {
		t.Fatalf("%d examples, %v", len(rows.Examples), err)
	}
	for _, turn := range rows.Examples[0].Prompt {
		if turn.Role == "tool" || len(turn.Calls) > 0 {
			t.Fatalf("a row with a photo kept tool turns: %+v", rows.Examples[0].Prompt)
		}
	}
	if n := len(rows.Examples[0].Prompt); n != 3 || rows.Examples[0].Media() != 1 {
		t.Fatalf("prompt %+v", rows.Examples[0].Prompt)
	}
}
