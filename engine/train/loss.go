package train

import (
	"fmt"

	"perch/engine/autodiff"
	"perch/engine/gemma4"
	"perch/engine/tensor"
)

// The losses are Objectives (objective.go, one file per method); head
// computes the per-sequence sums f they are functions of.

// headBytes bounds one vocabulary block of the head's logits.
const headBytes = 16 << 20

// head computes s.logps and s.sum from s.hN (the counted positions' target
// log-probabilities, gemma4's TargetLogProbs a vocabulary block at a time)
// and, with grad, s.dh = ∂sum/∂hN (the final norm's gradient on a tape).
func (t *Trainer) head(s *seq, text *gemma4.Text, grad bool) error {
	b := t.b
	L, H, n := len(s.ids), text.Cfg.HiddenSize, s.e-s.a
	x := b.Reshape(b.Slice(autodiff.Value(s.hN), 1, s.a, s.e), n, H)
	tgt := b.FromInt32(s.ids[s.a+1:s.e+1], []int{n})
	var hn tensor.Tensor
	var xp *autodiff.Var
	if grad {
		t.tape.Reset()
		xp = t.tape.Param(x)
		hn = text.WithBackend(t.tape, nil).HeadNorm(xp)
	} else {
		hn = text.HeadNorm(x)
	}
	logp, dhn := text.TargetLogProbs(autodiff.Value(hn), tgt, grad, headBytes)
	vals, err := b.Float32s(logp)
	if err != nil {
		return err
	}
	s.logps, s.sum = s.logps[:0], 0
	for _, v := range vals {
		s.logps = append(s.logps, float64(v))
		s.sum += float64(v)
	}
	if grad {
		if err := t.tape.Backward([]tensor.Tensor{hn}, []tensor.Tensor{dhn}); err != nil {
			return err
		}
		t.account(t.tape.PeakBytes() + 4*int64(n)*int64(H))
		s.dh = b.Pad(b.Reshape(xp.Grad(), 1, n, H), 1, s.a, L-s.e, 0)
		t.tape.Reset()
		t.boundary(nil, s.dh)
	}
	return nil
}

// sequences checks a row and makes its sequences: one for SFT, chosen and
// rejected for pairs (prompt + response each), prompt + completion for
// unpaired rows.
func sequences(kind RowKind, r *Row, vocab int) ([]*seq, error) {
	check := func(ids []int32) error {
		for _, id := range ids {
			if id < 0 || int(id) >= vocab {
				return fmt.Errorf("%s: token id %d is outside the model's vocabulary of %d", r.Source, id, vocab)
			}
		}
		return nil
	}
	var resps [][]int32
	switch kind {
	case RowsSFT:
		if len(r.IDs) < 2 || r.PromptLen < 1 || r.PromptLen >= len(r.IDs) {
			return nil, fmt.Errorf("%s: an SFT row needs a prompt of at least 1 token and at least 1 target token (%d tokens, prompt %d)", r.Source, len(r.IDs), r.PromptLen)
		}
		if err := check(r.IDs); err != nil {
			return nil, err
		}
		return []*seq{{ids: r.IDs, a: r.PromptLen - 1, e: len(r.IDs) - 1}}, nil
	case RowsPairs:
		if len(r.Prompt) == 0 || len(r.Chosen) == 0 || len(r.Rejected) == 0 {
			return nil, fmt.Errorf("%s: a preference row needs a prompt and two non-empty responses", r.Source)
		}
		resps = [][]int32{r.Chosen, r.Rejected}
	default:
		if len(r.Prompt) == 0 || len(r.Chosen) == 0 {
			return nil, fmt.Errorf("%s: an unpaired row needs a prompt and a non-empty completion", r.Source)
		}
		resps = [][]int32{r.Chosen}
	}
	var out []*seq
	for _, resp := range resps {
		ids := append(append([]int32{}, r.Prompt...), resp...)
		if err := check(ids); err != nil {
			return nil, err
		}
		out = append(out, &seq{ids: ids, a: len(r.Prompt) - 1, e: len(ids) - 1})
	}
	return out, nil
}
