package train

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"perch/engine/gocpu"
	"perch/engine/lora"
)

// resumeRun trains the tiny model 12 steps (dropout on, LoRA+ 4, cosine
// schedule, shuffled): from the start, or from the state saved in dir;
// stopAt > 0 cancels the run once that step is reported.
func resumeRun(t *testing.T, dir string, from *State, stopAt int) *Result {
	t.Helper()
	fx := newFixture(t, gocpu.New(gocpu.Options{}))
	opts := Options{Method: SFT, LearningRate: 1e-3, LoRAPlusRatio: 4, GradClip: 1, Seed: 3,
		Schedule: Schedule{Name: "cosine", Warmup: 2, DecaySteps: 10}}
	ad := fx.ad
	ad.Config.LoRA.Dropout = 0.2
	if from != nil {
		ad = from.Adapter
	}
	tr, err := NewTrainer(fx.b, fx.m, ad, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if from != nil {
		if err := tr.Restore(from.Moments); err != nil {
			t.Fatal(err)
		}
	}
	rows := append(fx.sftRows(), fx.sftRows()...)
	p := Plan{Method: SFT, Train: rows, Valid: fx.sftRows(), Iters: 12, BatchSize: 2, ValEvery: 3, SaveEvery: 4, Seed: 3,
		AdapterDir: dir, Resume: from, Settings: &Settings{Options: opts, LoRA: ad.Config, Iters: 12, BatchSize: 2, ValEvery: 3, SaveEvery: 4}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := Host{Emit: func(ev Event) {
		if ev.Kind == EventStep && ev.Step == stopAt {
			cancel()
		}
	}}
	res, err := Run(ctx, Driven(tr), p, h)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestResumeIsExact: a run stopped after step 5 (between checkpoints) and
// continued from the state at the top of its folder, and one continued from
// its step-4 checkpoint, end with the uninterrupted run's adapter byte for
// byte.
func TestResumeIsExact(t *testing.T) {
	whole := filepath.Join(t.TempDir(), "whole")
	resumeRun(t, whole, nil, 0)
	want, err := os.ReadFile(filepath.Join(whole, lora.WeightsFile))
	if err != nil {
		t.Fatal(err)
	}
	stopped := filepath.Join(t.TempDir(), "stopped")
	if res := resumeRun(t, stopped, nil, 5); !res.Cancelled || res.Steps != 5 {
		t.Fatalf("the stopped run: %+v", res)
	}
	m, err := ReadMetrics(stopped)
	if err != nil || len(m.Checkpoints) != 1 || !m.Cancelled {
		t.Fatalf("metrics.json of the stopped run: %+v %v", m, err)
	}
	for _, from := range []string{stopped, filepath.Join(stopped, m.Checkpoints[0].Path)} {
		st, err := ReadState(from)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("continuing from %s: step %d, epoch %d row %d, %d sequences", filepath.Base(from), st.Step, st.Epoch, st.Pos, st.Moments.Seqs)
		if res := resumeRun(t, stopped, st, 0); res.Steps != 12 || res.Cancelled {
			t.Fatalf("the continued run: %+v", res)
		}
		got, _ := os.ReadFile(filepath.Join(stopped, lora.WeightsFile))
		if !bytes.Equal(got, want) {
			t.Fatalf("continued from %s: the adapter differs from the uninterrupted run's", from)
		}
	}
	m, err = ReadMetrics(stopped)
	if err != nil || !m.Finished || m.Steps != 12 || len(m.Checkpoints) != 3 || len(m.Validation) != 7 { // steps 0 3 4 6 8 9 12, once each
		t.Errorf("metrics.json after continuing: %+v %v", m, err)
	}
}
