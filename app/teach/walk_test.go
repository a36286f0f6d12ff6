package teach_test

import (
	"context"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"perch/app/teach"
	"perch/engine/lora"
	"perch/ui"
)

// jobRecorder is the engine's trainer with every job it is given kept.
type jobRecorder struct {
	teach.Trainer
	mu   sync.Mutex
	jobs []teach.Job
}

func (j *jobRecorder) Train(ctx context.Context, base string, job teach.Job) (teach.Training, error) {
	j.mu.Lock()
	j.jobs = append(j.jobs, job)
	j.mu.Unlock()
	return j.Trainer.Train(ctx, base, job)
}

// TestTeachWalk walks "Train" to an adapter answering in a chat on the
// real engine and counts what the way costs: the rows reach the engine as
// rows (no JSONL file written, none parsed: the job names no dataset
// folder and no line), and the adapter is read once after training, by the
// chat that switches it on.
func TestTeachWalk(t *testing.T) {
	dir := t.TempDir()
	r := newTeachRig(t, dir)
	rec := &jobRecorder{Trainer: teach.NewEngineTrainer(r.rt)}
	svc, _, err := teach.New(teach.Options{Store: r.store, Dir: dir, Trainer: rec, SaveEvery: 3,
		Bases:  func() ([]ui.TeachBase, error) { return []ui.TeachBase{{ID: "tiny", Name: "Tiny Gemma"}}, nil },
		Locate: func(string) (string, string, error) { m, _ := filepath.Abs(e2eModel); return m, "Tiny Gemma", nil }})
	if err != nil {
		t.Fatal(err)
	}
	svc.Watch(func(u ui.TrainUpdate) { r.updates <- u })
	r.svc = svc
	r.teachSome(4)
	reads := lora.Loads()
	run, err := svc.Start(ui.TrainPlan{Base: "tiny", Name: "walk", Source: ui.TeachSource{Feedback: true}, Method: ui.MethodDPO,
		Rank: 4, Steps: 6, LearningRate: 1e-4, LoRAPlusRatio: ui.DefaultLoRAPlusRatio, ValShare: 0.25, BatchSize: 1,
		MaxSeqLen: 256, Beta: 0.1, Lambda: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	done := r.until("the run to finish", func(u ui.TrainRun) bool { return !u.State.Active() })
	if done.State != ui.RunDone || done.AdapterID == "" {
		t.Fatalf("run ended %+v", done)
	}

	// Rows as rows: 0 JSONL written or parsed on the way to training.
	if len(rec.jobs) != 1 {
		t.Fatalf("%d jobs", len(rec.jobs))
	}
	j := rec.jobs[0]
	parsed := 0
	if j.Data != "" {
		parsed++
	}
	for _, ex := range append(j.Train[:len(j.Train):len(j.Train)], j.Valid...) {
		if ex.Line != nil {
			parsed++
		}
	}
	var written []string
	filepath.WalkDir(filepath.Join(dir, "training", run.ID), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") && d.Name() != "metrics.jsonl" { // the engine's event log, not data
			written = append(written, p)
		}
		return nil
	})
	if parsed != 0 || len(written) != 0 || len(j.Train) != 3 || len(j.Valid) != 1 {
		t.Fatalf("on the way to training: %d JSONL parses, %d JSONL files %v; %d+%d rows", parsed, len(written), written, len(j.Train), len(j.Valid))
	}
	if got := lora.Loads() - reads; got != 0 {
		t.Fatalf("the adapter was read %d times between training and the library", got)
	}

	// In the chat: one read, the engine's, however many answers use it.
	rep := r.ask("", "Hello?")
	if err := r.chat.SetAdapter(rep.ConversationID, done.AdapterID); err != nil {
		t.Fatal(err)
	}
	r.ask(rep.ConversationID, "And now?")
	r.ask(rep.ConversationID, "Once more?")
	if got := lora.Loads() - reads; got != 1 {
		t.Fatalf("the adapter was read %d times after training, want 1", got)
	}
	as, _ := svc.Adapters()
	if len(as) != 1 || as[0].Rank != 4 || as[0].Steps != 6 {
		t.Fatalf("library %+v", as)
	}
}
