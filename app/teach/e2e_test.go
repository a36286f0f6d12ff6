package teach_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"perch/app/chat"
	"perch/app/history"
	"perch/app/teach"
	"perch/engine"
	"perch/engine/lora"
	"perch/engine/train"
	"perch/ui"
)

// The fixture model and image the engine work copies into testdata/.
const (
	e2eModel = "../../testdata/models/text-tiny"
	e2eImage = "../../testdata/goldens/vision-tiny/image.png"
)

// teachRig is the real teach service on the tiny fixture model: the chat
// runtime's engine trains, the history holds the feedback.
type teachRig struct {
	t       *testing.T
	store   *history.Store
	rt      *chat.Runtime
	svc     *teach.Service
	chat    *chat.Service
	updates chan ui.TrainUpdate
	dir     string
}

// memChoice is the adapter choice in memory (the app keeps it in preferences).
type memChoice struct {
	store *history.Store
	def   string
}

func (c *memChoice) Default() string            { return c.def }
func (c *memChoice) SetDefault(id string) error { c.def = id; return nil }
func (c *memChoice) Name(id string) string      { a, _ := c.store.AdapterByID(id); return a.Name }
func (c *memChoice) Dir(id string) string       { a, _ := c.store.AdapterByID(id); return a.Dir }

func newTeachRig(t *testing.T, dir string) *teachRig { return newTeachRigOn(t, dir, e2eModel, false) }

// newTeachRigOn is the rig on another fixture model (vision: it sees photos).
func newTeachRigOn(t *testing.T, dir, fixture string, vision bool) *teachRig {
	t.Helper()
	if _, err := os.Stat(filepath.Join(fixture, "config.json")); err != nil {
		t.Skipf("fixture model %s not present: %v", fixture, err)
	}
	model, _ := filepath.Abs(fixture)
	store, _, err := history.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	locate := func(string) (chat.Located, error) {
		return chat.Located{Dir: model, Name: "Tiny Gemma", Vision: vision}, nil
	}
	open := func(d string) (chat.Engine, engine.ModelInfo, error) {
		e, err := engine.Open(d, engine.Options{Backend: "go"})
		if err != nil {
			return nil, engine.ModelInfo{}, err
		}
		return e, e.Info(), nil
	}
	rt := chat.NewRuntime(locate, open, nil)
	t.Cleanup(rt.Close)
	rt.Select("tiny")
	r := &teachRig{t: t, store: store, rt: rt, dir: dir, updates: make(chan ui.TrainUpdate, 1<<14)}
	r.svc, _, err = teach.New(teach.Options{Store: store, Dir: dir, Trainer: teach.NewEngineTrainer(rt),
		Bases:  func() ([]ui.TeachBase, error) { return []ui.TeachBase{{ID: "tiny", Name: "Tiny Gemma"}}, nil },
		Locate: func(string) (string, string, error) { return model, "Tiny Gemma", nil }, SaveEvery: 3})
	if err != nil {
		t.Fatal(err)
	}
	r.svc.Watch(func(u ui.TrainUpdate) { r.updates <- u })
	settings := func() ui.Settings {
		s := ui.DefaultSettings()
		temp, most := float32(0), 24
		s.Sampling.Temperature, s.MaxTokens = &temp, &most
		return s
	}
	r.chat = chat.New(store, rt, chat.MediaProbe{}, settings)
	r.chat.Choice = &memChoice{store: store}
	return r
}

// ask sends text in conversation convID and returns the finished answer.
func (r *teachRig) ask(convID, text string) ui.Reply {
	r.t.Helper()
	rep, err := r.chat.Send(context.Background(), convID, text, nil)
	if err != nil {
		r.t.Fatal(err)
	}
	end := make(chan ui.Answer, 1)
	rep.Stream.Follow(func(f func()) { f() }, func(a ui.Answer) {
		if a.Done {
			end <- a
		}
	})
	last := <-end
	if last.State != ui.Done {
		r.t.Fatalf("answer ended %q: %v", last.State, last.Err)
	}
	rep.Assistant.Text = last.Text
	return rep
}

// teachSome gives feedback on a few answers: thumbs down and a correction
// on each.
func (r *teachRig) teachSome(n int) {
	for i := 0; i < n; i++ {
		rep := r.ask("", []string{"Say hello.", "Name a colour.", "Count to three.", "Greet me."}[i%4])
		if err := r.chat.Rate(rep.ConversationID, rep.Assistant.ID, ui.ThumbDown); err != nil {
			r.t.Fatal(err)
		}
		if _, err := r.chat.Correct(rep.ConversationID, rep.Assistant.ID, "Hello from Perch, kindly."); err != nil {
			r.t.Fatal(err)
		}
	}
}

func (r *teachRig) until(what string, cond func(ui.TrainRun) bool) ui.TrainRun {
	r.t.Helper()
	deadline := time.After(5 * time.Minute)
	for {
		select {
		case u := <-r.updates:
			if cond(u.Run) {
				return u.Run
			}
		case <-deadline:
			r.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestTeachTinyModelEndToEnd: feedback in chats, a DPO run on the real
// trainer from it, metrics and checkpoints recorded, the adapter in the
// library, then switched on in a conversation that answers with it.
func TestTeachTinyModelEndToEnd(t *testing.T) {
	r := newTeachRig(t, t.TempDir())
	r.teachSome(4)
	sum, err := r.svc.Summarize(ui.TeachSource{Feedback: true}, 0.25)
	if err != nil || sum.Pairs != 4 {
		t.Fatalf("summary %+v, %v", sum, err)
	}
	plan := ui.TrainPlan{Base: "tiny", Name: "my-style", Source: ui.TeachSource{Feedback: true}, Method: ui.MethodDPO,
		Rank: 4, Steps: 10, LearningRate: 1e-4, LoRAPlusRatio: ui.DefaultLoRAPlusRatio, ValShare: 0.25, BatchSize: 1,
		MaxSeqLen: 256, Beta: 0.1, Lambda: 0.1}
	run, err := r.svc.Start(plan)
	if err != nil {
		t.Fatal(err)
	}
	// A chat during the run is answered (between two steps).
	r.ask("", "Are you training?")
	done := r.until("the run to finish", func(u ui.TrainRun) bool { return !u.State.Active() })
	if done.State != ui.RunDone || done.Step != 10 || done.AdapterID == "" {
		t.Fatalf("run ended %+v", done)
	}
	pts, _ := r.svc.Points(run.ID)
	var steps, vals, margins int
	for _, p := range pts {
		if !math.IsNaN(p.Loss) {
			steps++
		}
		if !math.IsNaN(p.ValLoss) {
			vals++
		}
		if !math.IsNaN(p.Margin) {
			margins++
		}
	}
	if steps != 10 || vals == 0 || margins != 10 {
		t.Fatalf("%d step points, %d validations, %d margins", steps, vals, margins)
	}
	cs, _ := r.store.Checkpoints(run.ID)
	if len(cs) == 0 {
		t.Fatal("no checkpoint recorded")
	}
	for _, c := range cs {
		if _, err := lora.Load(c.Path); err != nil {
			t.Fatalf("checkpoint %d: %v", c.Step, err)
		}
	}
	as, _ := r.svc.Adapters()
	if len(as) != 1 || as[0].Rank != 4 || as[0].Method != ui.MethodDPO {
		t.Fatalf("library %+v", as)
	}
	// The run's best, the library's and the checkpoints' losses are the
	// engine's, as its metrics.json names them.
	rec, err := r.store.Run(run.ID)
	if err != nil {
		t.Fatal(err)
	}
	m, err := train.ReadMetrics(filepath.Join(rec.Dir, "part-0"))
	if err != nil || m.Best == nil || len(m.Checkpoints) != len(cs) {
		t.Fatalf("metrics.json %+v, %v", m, err)
	}
	if done.BestStep != m.Best.Step || done.BestVal != *m.Best.ValLoss || as[0].BestStep != m.Best.Step || as[0].BestVal != *m.Best.ValLoss {
		t.Fatalf("best: run step %d %v, library step %d %v; the engine's step %d %v",
			done.BestStep, done.BestVal, as[0].BestStep, as[0].BestVal, m.Best.Step, *m.Best.ValLoss)
	}
	for i, c := range cs {
		if e := m.Checkpoints[i]; c.Step != e.Step || e.ValLoss == nil || c.ValLoss != *e.ValLoss {
			t.Fatalf("checkpoint %d recorded %+v; the engine's %+v", i, c, e)
		}
	}
	// Switched on in a conversation, it answers: the answer is labelled with it.
	rep := r.ask("", "Hello?")
	if err := r.chat.SetAdapter(rep.ConversationID, as[0].ID); err != nil {
		t.Fatal(err)
	}
	rep2 := r.ask(rep.ConversationID, "And now?")
	ms, _ := r.chat.Messages(rep2.ConversationID)
	if got := ms[len(ms)-1].Model; !strings.HasSuffix(got, " + my-style") || ms[1].Model != "Tiny Gemma" {
		t.Fatalf("answers labelled %q then %q", ms[1].Model, got)
	}
}

// TestTeachPhotoPairTrains: a corrected answer about a photo becomes a
// pair whose prompt carries the photo, and the real trainer trains on it
// (the unified tiny model's vision path, frozen, as at inference).
func TestTeachPhotoPairTrains(t *testing.T) {
	r := newTeachRigOn(t, t.TempDir(), "../../testdata/models/vision-unified-tiny", true)
	png, err := os.ReadFile(e2eImage)
	if err != nil {
		t.Fatal(err)
	}
	var atts []ui.Attachment
	for _, name := range []string{"bird.png", "bird again.png"} {
		a, err := r.store.PutBlob(png, history.Attachment{Name: name, Kind: "image", MIME: "image/png", Width: 64, Height: 64})
		if err != nil {
			t.Fatal(err)
		}
		atts = append(atts, ui.Attachment{ID: a.SHA256, Name: name, Kind: ui.Image})
	}
	for i, q := range []string{"What bird is this?", "And its colour?", "Where does it live?"} {
		rep, err := r.chat.Send(context.Background(), "", q, atts[i%2:i%2+1])
		if err != nil {
			t.Fatal(err)
		}
		end := make(chan ui.Answer, 1)
		rep.Stream.Follow(func(f func()) { f() }, func(a ui.Answer) {
			if a.Done {
				end <- a
			}
		})
		if a := <-end; a.State != ui.Done {
			t.Fatalf("answer %q: %v", a.State, a.Err)
		}
		r.chat.Rate(rep.ConversationID, rep.Assistant.ID, ui.ThumbDown)
		if _, err := r.chat.Correct(rep.ConversationID, rep.Assistant.ID, "A robin, with a red breast."); err != nil {
			t.Fatal(err)
		}
	}
	sum, _ := r.svc.Summarize(ui.TeachSource{Feedback: true}, 0)
	if sum.Pairs != 3 || sum.Media != 3 {
		t.Fatalf("summary %+v", sum)
	}
	run, err := r.svc.Start(ui.TrainPlan{Base: "tiny", Name: "birds", Source: ui.TeachSource{Feedback: true}, Method: ui.MethodDPO,
		Rank: 4, Steps: 3, LearningRate: 1e-4, LoRAPlusRatio: ui.DefaultLoRAPlusRatio, BatchSize: 1, MaxSeqLen: 1024, Beta: 0.1, Lambda: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	done := r.until("the photo run", func(u ui.TrainRun) bool { return !u.State.Active() })
	if done.State != ui.RunDone || done.Step != 3 {
		t.Fatalf("run ended %+v", done)
	}
	// The pairs and their photo went to the engine as rows: no dataset
	// folder, no copy of the photo.
	if _, err := os.Stat(filepath.Join(r.dir, "training", run.ID, "data")); !os.IsNotExist(err) {
		t.Fatalf("the run wrote a dataset folder: %v", err)
	}
}
