package engine

import (
	"context"
	"os"
	"path/filepath"
	"slices"
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

// trainRows are pre-tokenized rows for the tiny model.
func trainRows(n int) []train.Row {
	rows := make([]train.Row, n)
	for i := range rows {
		ids := []int32{2}
		for j := 0; j < 12+i%3; j++ {
			ids = append(ids, int32(3+(i*37+j*11)%1000))
		}
		rows[i] = train.Row{IDs: ids, PromptLen: 4}
	}
	return rows
}

func tinyRun(t *testing.T, dir string) TrainRequest {
	return TrainRequest{Train: trainRows(6), Valid: trainRows(2), Iters: 8, BatchSize: 2, ValEvery: 4, SaveEvery: 4,
		LoRA: tinyLoRA(), AdapterDir: dir, Options: train.Options{LearningRate: 2e-3, LoRAPlusRatio: 4, Seed: 3}}
}

// drain reads a run to its end; onStep runs at each step event.
func drain(t *testing.T, run *TrainRun, onStep func(step int)) []TrainEvent {
	t.Helper()
	var evs []TrainEvent
	for ev := range run.Events() {
		evs = append(evs, ev)
		if ev.Kind == train.EventStep && onStep != nil {
			onStep(ev.Step)
		}
	}
	if last := evs[len(evs)-1]; last.Kind != train.EventDone {
		t.Fatalf("the run ended with %+v", last)
	}
	return evs
}

func leaves(t *testing.T, dir string) map[string][]float32 {
	t.Helper()
	a, err := lora.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]float32{}
	for n, l := range a.Leaves {
		out[n] = l.Data
	}
	return out
}

// TestChatDuringTraining: requests sent while a run trains are answered
// between its steps, on the same loaded weights (with no adapter, or their
// own), and the run ends with exactly the adapter an uninterrupted run with
// the same seed makes.
func TestChatDuringTraining(t *testing.T) {
	for _, backend := range testBackends() {
		t.Run(backend, func(t *testing.T) {
			e := openTiny(t, "text-tiny", Options{Backend: backend})
			quiet := filepath.Join(t.TempDir(), "quiet")
			tr, err := e.Train(t.Context(), tinyRun(t, quiet))
			if err != nil {
				t.Fatal(err)
			}
			drain(t, tr, nil)
			base, _ := run(t, e, Request{PromptIDs: []int32{2, 485, 494}, MaxTokens: 4, IgnoreEOS: true, Sampling: Sampling{Temperature: f32(0)}})

			busy := filepath.Join(t.TempDir(), "busy")
			tr, err = e.Train(t.Context(), tinyRun(t, busy))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.Train(t.Context(), tinyRun(t, t.TempDir())); err != ErrTraining {
				t.Errorf("a second run: %v, want ErrTraining", err)
			}
			answers := make(chan []int32, 2)
			evs := drain(t, tr, func(step int) {
				if step != 2 {
					return
				}
				for _, adapter := range []string{"", loraTinyDir} {
					ch, err := e.Generate(t.Context(), Request{PromptIDs: []int32{2, 485, 494}, MaxTokens: 4, IgnoreEOS: true,
						Sampling: Sampling{Temperature: f32(0)}, Adapter: adapter})
					if err != nil {
						t.Error(err)
						return
					}
					go func() {
						ids, last := collect(t, ch)
						if last.Kind != EventDone {
							t.Errorf("the chat during training ended with %v", last.Err)
						}
						answers <- ids
					}()
				}
			})
			paused := 0
			for _, ev := range evs {
				if ev.Kind == train.EventPaused {
					paused++
				}
			}
			if paused < 2 {
				t.Errorf("%d paused events: the requests did not run between steps", paused)
			}
			a, b := <-answers, <-answers
			if !slices.Equal(a, base) && !slices.Equal(b, base) {
				t.Errorf("the base-model chat during training answered %v / %v, want %v", a, b, base)
			}
			want, got := leaves(t, quiet), leaves(t, busy)
			for n, w := range want {
				if !slices.Equal(w, got[n]) {
					t.Fatalf("%s differs after a run with chats in between", n)
				}
			}
		})
	}
}

// TestCancelledRunLeavesAdapter: a run stopped mid-way saves the adapter of
// the steps it made; the adapter loads and applies.
func TestCancelledRunLeavesAdapter(t *testing.T) {
	e := openTiny(t, "text-tiny", Options{Backend: BackendGo})
	dir := filepath.Join(t.TempDir(), "adapter")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req := tinyRun(t, dir)
	req.Iters = 1000
	tr, err := e.Train(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	evs := drain(t, tr, func(step int) {
		if step == 3 {
			cancel()
		}
	})
	res := evs[len(evs)-1].Result
	if !res.Cancelled || res.Steps < 3 || res.Steps >= req.Iters { // events run a little behind the steps
		t.Fatalf("result %+v", res)
	}
	if _, s := run(t, e, Request{PromptIDs: []int32{2, 485, 494}, MaxTokens: 2, Sampling: Sampling{Temperature: f32(0)}, Adapter: dir}); s == nil {
		t.Fatal("the saved adapter does not apply")
	}
	m, err := train.ReadMetrics(dir)
	if err != nil || !m.Cancelled || m.Steps != res.Steps {
		t.Errorf("metrics.json %+v %v", m, err)
	}
}

// TestPauseResumeAndNotices: a paused run makes no step while it serves
// requests, and goes on when resumed; rows cut to --max-seq-len are noticed.
func TestPauseResumeAndNotices(t *testing.T) {
	e := openTiny(t, "text-tiny", Options{Backend: BackendGo})
	data := t.TempDir()
	long := `{"input_ids": [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13], "prompt_len": 2}`
	os.WriteFile(filepath.Join(data, "train.jsonl"), []byte(long+"\n"+long+"\n"), 0o644)
	req := TrainRequest{Data: data, MaxLen: 8, Iters: 4, BatchSize: 1, LoRA: tinyLoRA(), AdapterDir: t.TempDir(),
		Options: train.Options{LearningRate: 1e-3}}
	tr, err := e.Train(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	var stepsWhilePaused, held int
	paused := false
	var notice string
	for ev := range tr.Events() {
		switch ev.Kind {
		case train.EventNotice:
			notice = ev.Text
		case train.EventStep:
			if paused {
				stepsWhilePaused++
			}
			if ev.Step == 1 {
				tr.Pause()
				paused = true
			}
		case train.EventPaused:
			if ev.Pause == PauseUser {
				held++
				// While held, a request is still served; then resume.
				ids, _ := run(t, e, Request{PromptIDs: []int32{2, 485, 494}, MaxTokens: 2, Sampling: Sampling{Temperature: f32(0)}})
				if len(ids) != 2 {
					t.Errorf("request during the pause answered %v", ids)
				}
				paused = false
				tr.Resume()
			}
		case train.EventError:
			t.Fatal(ev.Err)
		}
	}
	if !strings.Contains(notice, "train.jsonl: 2 rows cut to the maximum length") {
		t.Errorf("notice %q", notice)
	}
	// The step after the pause may already have been under way.
	if held != 1 || stepsWhilePaused > 1 {
		t.Errorf("held %d times, %d steps while paused", held, stepsWhilePaused)
	}
}

// TestCloseEndsAPausedRun: the engine closing while its background task
// (a run) is held ends the run at its step boundary with the adapter saved
// and a cancelled done event; the engine's worker then stops.
func TestCloseEndsAPausedRun(t *testing.T) {
	e := openTiny(t, "text-tiny", Options{Backend: BackendGo})
	dir := filepath.Join(t.TempDir(), "adapter")
	req := tinyRun(t, dir)
	req.Iters = 1000
	tr, err := e.Train(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	var last TrainEvent
	for ev := range tr.Events() {
		switch {
		case ev.Kind == train.EventStep && ev.Step == 1:
			tr.Pause()
		case ev.Kind == train.EventPaused && ev.Pause == PauseUser:
			go e.Close()
		}
		last = ev
	}
	if last.Kind != train.EventDone || !last.Result.Cancelled || last.Result.Steps >= req.Iters {
		t.Fatalf("the run ended with %+v", last)
	}
	if _, err := lora.Load(dir); err != nil {
		t.Fatalf("the adapter was not saved: %v", err)
	}
	if _, err := e.Generate(t.Context(), Request{PromptIDs: []int32{2}, MaxTokens: 1}); err != ErrClosed {
		t.Fatalf("after close: %v", err)
	}
}
