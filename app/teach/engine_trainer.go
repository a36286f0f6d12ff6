package teach

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"path/filepath"

	"perch/app/chat"
	"perch/engine"
	"perch/engine/lora"
	"perch/engine/train"
)

// NewEngineTrainer is the Trainer that runs the Teach page's jobs with the
// engine on rt's model.
func NewEngineTrainer(rt *chat.Runtime) Trainer { return engineTrainer{rt} }

// engineTrainer runs the Teach page's jobs with the engine's trainer on
// the runtime's model: the same loaded weights chats use, so a chat during
// a run is answered between two steps.
type engineTrainer struct{ rt *chat.Runtime }

func (t engineTrainer) Train(ctx context.Context, base string, j Job) (Training, error) {
	if t.rt.State().ID != base {
		if err := t.rt.Use(base); err != nil { // training a model makes it the one chats use
			return nil, err
		}
	}
	eng, release, err := t.rt.AcquireEngine(ctx)
	if err != nil {
		return nil, err
	}
	cfg := lora.DefaultConfig()
	cfg.LoRA.Rank = j.Rank
	if model, err := json.Marshal(base); err == nil {
		cfg.Extra = map[string]json.RawMessage{"model": model} // as mlx-lm writes it: the base it was made for
	}
	run, err := eng.Train(ctx, engine.TrainRequest{
		Data: j.Data, Examples: j.Train, ValidExamples: j.Valid, ReadMedia: j.ReadMedia, MaxLen: j.MaxLen, LoRA: cfg, Resume: j.Resume, Continue: j.Continue,
		Options: train.Options{Method: train.Method(j.Method), LearningRate: j.LR, LoRAPlusRatio: j.LoRAPlus,
			Beta: j.Beta, Lambda: j.Lambda, Seed: j.Seed, GradClip: train.DefaultGradClip},
		Iters: j.Iters, BatchSize: j.BatchSize, ValEvery: j.ValEvery, SaveEvery: j.SaveEvery, AdapterDir: j.AdapterDir,
	})
	if err != nil {
		release()
		return nil, err
	}
	out := &engineTraining{run: run, events: make(chan Event, 64)}
	go func() {
		defer release()
		defer close(out.events)
		for ev := range run.Events() {
			out.events <- teachEvent(ev, train.Method(j.Method), j.AdapterDir)
		}
	}()
	return out, nil
}

type engineTraining struct {
	run    *engine.TrainRun
	events chan Event
}

func (t *engineTraining) Events() <-chan Event { return t.events }
func (t *engineTraining) Pause()               { t.run.Pause() }
func (t *engineTraining) Resume()              { t.run.Resume() }

// teachEvent is an engine event as the teach service records it (dir: the
// segment's adapter folder, which the engine's best checkpoint is named in).
func teachEvent(ev engine.TrainEvent, m train.Method, dir string) Event {
	out := Event{Step: ev.Step, Text: ev.Text, Path: ev.Path, Err: ev.Err, BestLoss: math.NaN()}
	switch ev.Kind {
	case train.EventStarted:
		out.Kind = EvStarted
	case train.EventStep:
		out.Kind, out.Loss, out.Tokens, out.TokensPerSec, out.ETA = EvStep, ev.Metrics.Loss, ev.Metrics.Tokens, ev.TokensPerSec, ev.ETA
		out.MarginLabel, out.Margin = ev.Metrics.Chart() // the method's own: DPO's reward margin, ORPO's log-odds ratio, …
	case train.EventValidation:
		out.Kind, out.ValLoss = EvValidation, ev.ValLoss
	case train.EventCheckpoint:
		out.Kind, out.ValLoss = EvCheckpoint, ev.ValLoss
		if b := ev.Best; b != nil {
			out.Best, out.BestStep, out.BestLoss = filepath.Join(dir, b.Path), b.Step, *b.ValLoss
		}
	case train.EventPaused:
		out.Kind = EvYield
		if ev.Pause == train.PauseUser {
			out.Kind = EvPaused
		}
	case train.EventNotice:
		out.Kind = EvNotice
	case train.EventDone:
		out.Kind = EvDone
		if r := ev.Result; r != nil {
			out.Adapter, out.Cancelled, out.Step = r.Adapter, r.Cancelled, r.Steps
			if r.Best != "" {
				out.Best, out.BestStep, out.BestLoss = r.Best, r.BestStep, r.BestLoss
			}
		}
	default:
		out.Kind = EvError
		if out.Err == nil {
			out.Err = errors.New("the training stopped with an unknown report")
		}
	}
	return out
}
