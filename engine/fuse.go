package engine

import (
	"context"
	"fmt"
	"math"
	"slices"

	"perch/engine/lora"
)

// FuseReport is what Fuse wrote and how the fused model compares with the
// adapter on the base model on a probe prompt.
type FuseReport struct {
	Projections int
	// Probed: the base model is quantized and requantized weights were
	// written, so the fused model was run on the probe prompt.
	Probed bool
	// MaxLogitDiff is the largest |logit| difference at the probe's last
	// prompt position; Tokens are the greedy answers (adapter on base,
	// fused model).
	MaxLogitDiff float64
	Tokens       [2][]int32
}

// SameAnswer reports whether the fused model answers the probe as the
// adapter on the base model does.
func (r *FuseReport) SameAnswer() bool { return slices.Equal(r.Tokens[0], r.Tokens[1]) }

// probeMessages is the prompt a fuse is checked on.
var probeMessages = []Message{{Role: RoleUser, Content: []Part{{Type: PartText, Text: "Say something about birds."}}}}

const probeTokens = 8

// Fuse writes a new model folder out: the engine's model with the adapter
// in adapterDir merged into its weights. The adapter must load and fit as
// a request's adapter must, and answer the probe prompt on the base model
// (an adapter whose answer is NaN or infinite is refused, as a request with
// it is). A quantized model, requantized, is then run from out on the probe
// too and the report says how far its logits moved.
func (e *Engine) Fuse(ctx context.Context, adapterDir, out string, opts lora.FuseOptions) (*FuseReport, error) {
	ra, err := e.adapters.load(adapterDir, e.model.Text)
	if err != nil {
		return nil, err
	}
	rep := &FuseReport{}
	want, wantIDs, err := e.probe(ctx, adapterDir)
	if err != nil {
		return nil, fmt.Errorf("fuse: the adapter on the base model fails the probe prompt, as a request with it would: %w", err)
	}
	opts.Text = e.model.Text
	if rep.Projections, err = lora.FuseDir(e.info.Dir, out, ra.host, opts); err != nil {
		return nil, err
	}
	rep.Tokens[0] = wantIDs
	if e.cfg.Quant.Bits == 0 || opts.Dequantize {
		return rep, nil
	}
	f, err := Open(out, Options{Backend: e.opts.Backend})
	if err != nil {
		return rep, fmt.Errorf("fuse: the fused model in %s does not load: %w", out, err)
	}
	defer f.Close()
	got, gotIDs, err := f.probe(ctx, "")
	if err != nil {
		return rep, fmt.Errorf("fuse: the fused model in %s fails the probe prompt: %w", out, err)
	}
	rep.Probed, rep.Tokens[1] = true, gotIDs
	for i := range min(len(got), len(want)) {
		rep.MaxLogitDiff = math.Max(rep.MaxLogitDiff, math.Abs(float64(got[i]-want[i])))
	}
	return rep, nil
}

// probe runs the probe prompt greedily: the last prompt position's logits
// and the answer's ids.
func (e *Engine) probe(ctx context.Context, adapter string) ([]float32, []int32, error) {
	var logits []float32
	ch, err := e.Generate(ctx, Request{Messages: probeMessages, MaxTokens: probeTokens, IgnoreEOS: true, Adapter: adapter,
		Sampling: Sampling{Temperature: new(float32)}, DumpLogits: func(v []float32) { logits = slices.Clone(v) }})
	if err != nil {
		return nil, nil, err
	}
	var ids []int32
	var last Event
	for ev := range ch {
		switch ev.Kind {
		case EventToken:
			if ev.Token.ID >= 0 {
				ids = append(ids, ev.Token.ID)
			}
		case EventDone, EventError:
			last = ev
		}
	}
	if last.Kind != EventDone {
		return nil, nil, last.Err
	}
	return logits, ids, nil
}
