package train

import (
	"fmt"
	"math"

	"perch/engine/autodiff"
	"perch/engine/gemma4"
	"perch/engine/tensor"
)

// Losses. Every method is a function of per-sequence sums of target-token
// log-probabilities, f = Σ_{j∈[a,e)} log softmax(logits[j])[ids[j+1]]:
//
//	SFT:  loss = −Σ_rows f / N, N the batch's counted tokens (padding never
//	      counts: rows are unpadded);
//	DPO:  per pair z = β((pc − pr) − (rc − rr)), loss = mean −log σ(z), the
//	      reference sums rc, rr from the base model (adapter switched off);
//	ORPO: per pair with mean log-probs lc = fc/nc, lr = fr/nr and log-odds
//	      o(l) = l − log(1 − e^l), loss = mean (−lc − λ log σ(o(lc) − o(lr))).
//
// So the backward needs, per sequence, ∂loss/∂f (a number) times ∂f/∂hN,
// which the head computes a chunk of positions at a time.

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

// groupLoss is one group's (a row, or a pair) share of the loss, the
// coefficients ∂loss/∂f of its sequences, and its metrics. ntoks is the
// batch's counted tokens (SFT), pairs the batch's pairs; refs are the
// reference sums (DPO).
func groupLoss(o Options, g []*seq, refs []float64, ntoks, pairs int, m *StepMetrics) (float64, []float64) {
	switch o.Method {
	case DPO:
		pc, pr, rc, rr := g[0].sum, g[1].sum, refs[0], refs[1]
		z := o.Beta * ((pc - pr) - (rc - rr))
		loss := softplus(-z) / float64(pairs)
		d := -o.Beta * sigmoid(-z) / float64(pairs) // ∂loss/∂pc; ∂loss/∂pr = −d
		cr, rj := o.Beta*(pc-rc), o.Beta*(pr-rr)
		m.ChosenReward += cr / float64(pairs)
		m.RejectedReward += rj / float64(pairs)
		m.Margin += (cr - rj) / float64(pairs)
		if cr > rj {
			m.Accuracy += 1 / float64(pairs)
		}
		return loss, []float64{d, -d}
	case ORPO:
		nc, nr := float64(g[0].tokens()), float64(g[1].tokens())
		lc, lr := math.Min(g[0].sum/nc, -1e-8), math.Min(g[1].sum/nr, -1e-8)
		oc, or := lc-math.Log1p(-math.Exp(lc)), lr-math.Log1p(-math.Exp(lr))
		u := oc - or
		loss := (-lc + o.Lambda*softplus(-u)) / float64(pairs)
		k := o.Lambda * sigmoid(-u) // −∂(−λ log σ(u))/∂u
		dc := (-1 - k/(1-math.Exp(lc))) / nc / float64(pairs)
		dr := k / (1 - math.Exp(lr)) / nr / float64(pairs)
		m.ChosenLogOdds += oc / float64(pairs)
		m.RejectedLogOdds += or / float64(pairs)
		m.LogOddsRatio += u / float64(pairs)
		m.NLL += -lc / float64(pairs)
		return loss, []float64{dc, dr}
	}
	return -g[0].sum / float64(ntoks), []float64{-1 / float64(ntoks)}
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// softplus is log(1 + e^x) = −log σ(−x), computed without overflow.
func softplus(x float64) float64 {
	if x > 0 {
		return x + math.Log1p(math.Exp(-x))
	}
	return math.Log1p(math.Exp(x))
}

// sequences checks a row and makes its sequences (one for SFT, chosen and
// rejected for DPO/ORPO: prompt + response each).
func sequences(method Method, r *Row, vocab int) ([]*seq, error) {
	check := func(ids []int32) error {
		for _, id := range ids {
			if id < 0 || int(id) >= vocab {
				return fmt.Errorf("%s: token id %d is outside the model's vocabulary of %d", r.Source, id, vocab)
			}
		}
		return nil
	}
	if !method.Preference() {
		if len(r.IDs) < 2 || r.PromptLen < 1 || r.PromptLen >= len(r.IDs) {
			return nil, fmt.Errorf("%s: an SFT row needs a prompt of at least 1 token and at least 1 target token (%d tokens, prompt %d)", r.Source, len(r.IDs), r.PromptLen)
		}
		if err := check(r.IDs); err != nil {
			return nil, err
		}
		return []*seq{{ids: r.IDs, a: r.PromptLen - 1, e: len(r.IDs) - 1}}, nil
	}
	if len(r.Prompt) == 0 || len(r.Chosen) == 0 || len(r.Rejected) == 0 {
		return nil, fmt.Errorf("%s: a preference row needs a prompt and two non-empty responses", r.Source)
	}
	var out []*seq
	for _, resp := range [][]int32{r.Chosen, r.Rejected} {
		ids := append(append([]int32{}, r.Prompt...), resp...)
		if err := check(ids); err != nil {
			return nil, err
		}
		out = append(out, &seq{ids: ids, a: len(r.Prompt) - 1, e: len(ids) - 1})
	}
	return out, nil
}
