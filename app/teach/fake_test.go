package teach

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"perch/app/history"
	"perch/app/hub"
	"perch/engine/lora"
	"perch/engine/train"
	"perch/ui"
)

// fakeTrainer plays a run: each step sleeps every, reports a falling loss,
// validates and saves a real adapter folder every SaveEvery steps, and
// stops at a cancelled context with the adapter saved (as the engine does).
type fakeTrainer struct {
	every time.Duration
	mu    sync.Mutex
	jobs  []Job
	hold  chan struct{}                        // when set, step 1 waits for it
	val   func(step int, loss float64) float64 // validation loss (nil: loss+0.05)
}

type fakeTraining struct {
	events chan Event
	mu     sync.Mutex
	paused chan struct{}
}

func (t *fakeTraining) Events() <-chan Event { return t.events }
func (t *fakeTraining) Pause() {
	t.mu.Lock()
	if t.paused == nil {
		t.paused = make(chan struct{})
	}
	t.mu.Unlock()
}
func (t *fakeTraining) Resume() {
	t.mu.Lock()
	if t.paused != nil {
		close(t.paused)
		t.paused = nil
	}
	t.mu.Unlock()
}
func (t *fakeTraining) gate() chan struct{} { t.mu.Lock(); defer t.mu.Unlock(); return t.paused }

// saveFake writes a small adapter folder the engine's loader accepts.
func saveFake(dir string, step int) error {
	cfg := lora.DefaultConfig()
	cfg.LoRA.Rank = 2
	a := &lora.Adapter{Config: cfg, Leaves: map[string]lora.Leaf{
		"model.layers.0.self_attn.q_proj.lora_a": {Shape: []int{4, 2}, Data: make([]float32, 8)},
		"model.layers.0.self_attn.q_proj.lora_b": {Shape: []int{2, 4}, Data: []float32{float32(step), 0, 0, 0, 0, 0, 0, 0}},
	}}
	return a.Save(dir)
}

func (f *fakeTrainer) Train(ctx context.Context, base string, j Job) (Training, error) {
	if len(j.Train) == 0 {
		if _, err := os.Stat(filepath.Join(j.Data, "train.jsonl")); err != nil {
			return nil, fmt.Errorf("no data: %w", err)
		}
	}
	if j.Resume != "" {
		if _, err := lora.Load(j.Resume); err != nil {
			return nil, err
		}
	}
	f.mu.Lock()
	f.jobs = append(f.jobs, j)
	hold := f.hold
	f.mu.Unlock()
	tr := &fakeTraining{events: make(chan Event, 8)}
	go func() {
		defer close(tr.events)
		tr.events <- Event{Kind: EvStarted}
		if f.val != nil && j.Resume == "" && j.Continue == "" { // the engine validates the start, which is no saved state
			tr.events <- Event{Kind: EvValidation, Step: 0, ValLoss: f.val(0, 0.7)}
		}
		var saved []train.Checkpoint // as the engine's metrics.json lists them
		best := func(ev Event) Event {
			ev.BestLoss = math.NaN()
			if b := train.BestOf(saved...); b != nil {
				ev.Best, ev.BestStep, ev.BestLoss = b.Path, b.Step, *b.ValLoss
			}
			return ev
		}
		for step := 1; step <= j.Iters; step++ {
			if step == 1 && hold != nil {
				<-hold
			}
			if g := tr.gate(); g != nil {
				tr.events <- Event{Kind: EvPaused, Step: step - 1}
				select {
				case <-g:
				case <-ctx.Done():
				}
			}
			if ctx.Err() != nil {
				saveFake(j.AdapterDir, step)
				tr.events <- best(Event{Kind: EvDone, Step: step - 1, Adapter: j.AdapterDir, Cancelled: true})
				return
			}
			time.Sleep(f.every)
			loss := 0.7 * math.Exp(-float64(step)/20)
			tr.events <- Event{Kind: EvStep, Step: step, Loss: loss, Margin: 0.01 * float64(step), Tokens: 40, TokensPerSec: 400, ETA: time.Second}
			if j.SaveEvery > 0 && step%j.SaveEvery == 0 {
				val := loss + 0.05
				if f.val != nil {
					val = f.val(step, loss)
				}
				tr.events <- Event{Kind: EvValidation, Step: step, ValLoss: val}
				dir := filepath.Join(j.AdapterDir, "checkpoints", fmt.Sprintf("step-%05d", step))
				if err := saveFake(dir, step); err != nil {
					tr.events <- Event{Kind: EvError, Err: err}
					return
				}
				saved = append(saved, train.Checkpoint{Step: step, Path: dir, ValLoss: &val})
				tr.events <- best(Event{Kind: EvCheckpoint, Step: step, Path: dir, ValLoss: val})
			}
		}
		if err := saveFake(j.AdapterDir, j.Iters); err != nil {
			tr.events <- Event{Kind: EvError, Err: err}
			return
		}
		tr.events <- best(Event{Kind: EvDone, Step: j.Iters, Adapter: j.AdapterDir})
	}()
	return tr, nil
}

// fixture is a service over a fresh history, with the tiny model as base.
type fixture struct {
	t       *testing.T
	store   *history.Store
	svc     *Service
	trainer *fakeTrainer
	dir     string
	budget  hub.Budget
	updates chan ui.TrainUpdate
}

const tinyModel = "../../testdata/models/text-tiny"

func newFixture(t *testing.T, dataDir string) *fixture {
	t.Helper()
	if dataDir == "" {
		dataDir = t.TempDir()
	}
	store, _, err := history.Open(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	f := &fixture{t: t, store: store, trainer: &fakeTrainer{}, dir: dataDir,
		budget: hub.Budget{TotalRAM: 16 << 30, Usable: 8 << 30, Source: "test"}, updates: make(chan ui.TrainUpdate, 4096)}
	abs, _ := filepath.Abs(tinyModel)
	svc, _, err := New(Options{Store: store, Dir: dataDir, Trainer: f.trainer,
		Bases:  func() ([]ui.TeachBase, error) { return []ui.TeachBase{{ID: "tiny", Name: "Tiny Gemma"}}, nil },
		Locate: func(id string) (string, string, error) { return abs, "Tiny Gemma", nil },
		Budget: func() (hub.Budget, error) { return f.budget, nil }})
	if err != nil {
		t.Fatal(err)
	}
	svc.Watch(func(u ui.TrainUpdate) { f.updates <- u })
	f.svc = svc
	return f
}

// until waits for a run update that satisfies cond.
func (f *fixture) until(what string, cond func(ui.TrainRun) bool) ui.TrainRun {
	f.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case u := <-f.updates:
			if cond(u.Run) {
				return u.Run
			}
		case <-deadline:
			f.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// chatTurn stores a question and an answer, returning the answer.
func (f *fixture) chatTurn(convID, q, a string, atts ...history.Attachment) history.Message {
	f.t.Helper()
	u := history.Message{ConversationID: convID, Role: "user", Text: q, Attachments: atts}
	if err := f.store.Append(&u); err != nil {
		f.t.Fatal(err)
	}
	m := history.Message{ConversationID: convID, Role: "assistant", Text: a, State: history.Done}
	if err := f.store.Append(&m); err != nil {
		f.t.Fatal(err)
	}
	return m
}

// correct makes text the answer's newest version, as the chat's pencil does.
func (f *fixture) correct(m *history.Message, text string) {
	f.t.Helper()
	m.Text, m.Origin = text, history.OriginEdited
	if err := f.store.NewVersion(m); err != nil {
		f.t.Fatal(err)
	}
}

func defaultPlan() ui.TrainPlan {
	return ui.TrainPlan{Base: "tiny", Name: "my-style", Source: ui.TeachSource{Feedback: true}, Method: ui.MethodDPO,
		Rank: 8, Steps: 20, LearningRate: 1e-5, LoRAPlusRatio: 16, ValShare: 0.2, BatchSize: 1, MaxSeqLen: 512, Beta: 0.1, Lambda: 0.1}
}

func (f *fakeTrainer) job(i int) Job {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.jobs[i]
}
