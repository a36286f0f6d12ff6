// Package sample picks the next token on the backend, following mlx-lm's
// sampler chain: log-probabilities, then top-p, min-p and top-k filters in
// that order, then a categorical draw at the temperature; temperature 0 is
// argmax. A repetition penalty (mlx-lm's sign-aware one) and suppressed
// tokens act on the logits first. Everything stays on the backend so the
// engine can queue step n+1 before reading token n.
package sample

import (
	"fmt"
	"math"

	"perch/engine/tensor"
)

// Params are resolved sampling settings.
type Params struct {
	Temperature       float32
	TopP              float32 // 0 or 1: off
	TopK              int     // 0: off
	MinP              float32 // 0: off
	RepetitionPenalty float32 // 0 or 1: off
	RepetitionContext int     // tokens the penalty looks back over (mlx-lm: 20)
	Seed              uint64
}

// Validate reports settings that cannot be used.
func (p Params) Validate(vocab int) error {
	switch {
	case p.Temperature < 0 || math.IsNaN(float64(p.Temperature)):
		return fmt.Errorf("temperature must be >= 0 (got %g)", p.Temperature)
	case p.TopP < 0 || p.TopP > 1:
		return fmt.Errorf("top-p must be in [0, 1] (got %g)", p.TopP)
	case p.MinP < 0 || p.MinP > 1:
		return fmt.Errorf("min-p must be in [0, 1] (got %g)", p.MinP)
	case p.TopK < 0:
		return fmt.Errorf("top-k must be >= 0 (got %d)", p.TopK)
	case p.RepetitionPenalty < 0:
		return fmt.Errorf("repetition penalty must be >= 0 (got %g)", p.RepetitionPenalty)
	}
	return nil
}

// UsesHistory reports whether sampling depends on earlier tokens.
func (p Params) UsesHistory() bool { return p.RepetitionPenalty != 0 && p.RepetitionPenalty != 1 }

// Sampler draws tokens; one per generation.
type Sampler struct {
	b        tensor.Backend
	p        Params
	vocab    int
	suppress tensor.Tensor // bool [V] or nil
	step     uint64
}

// New makes a sampler; suppress lists ids that are never drawn.
func New(b tensor.Backend, p Params, vocab int, suppress []int32) *Sampler {
	s := &Sampler{b: b, p: p, vocab: vocab}
	if len(suppress) > 0 {
		m := make([]bool, vocab)
		for _, id := range suppress {
			if id >= 0 && int(id) < vocab {
				m[id] = true
			}
		}
		s.suppress = b.FromBool(m, []int{vocab})
		b.Pin(s.suppress)
	}
	return s
}

// Release unpins what the sampler holds.
func (s *Sampler) Release() {
	if s.suppress != nil {
		s.b.Unpin(s.suppress)
	}
}

// Greedy is Sample at temperature 0 without a repetition penalty: the
// argmax of logits [.., V] (the last position) in float32, never picking
// an id of suppress (bool [V], or nil); int32 [1].
func Greedy(b tensor.Backend, logits, suppress tensor.Tensor, vocab int) tensor.Tensor {
	x, _ := prepare(b, logits, suppress, nil, vocab)
	return b.Reshape(b.Argmax(x, -1), 1)
}

// prepare is logits as float32 [1, V] with suppressed ids, and ids outside
// allow (bool [V], or nil), at -Inf; and -Inf.
func prepare(b tensor.Backend, logits, suppress, allow tensor.Tensor, vocab int) (x, negInf tensor.Tensor) {
	x = b.AsType(b.Reshape(logits, 1, vocab), tensor.Float32)
	negInf = b.Scalar(math.Inf(-1), tensor.Float32)
	if suppress != nil {
		x = b.Where(suppress, negInf, x)
	}
	if allow != nil {
		x = b.Where(allow, x, negInf)
	}
	return x, negInf
}

// Sample takes logits [.., V] (the last position) and returns int32 [1];
// recent are the latest known tokens for the repetition penalty.
func (s *Sampler) Sample(logits tensor.Tensor, recent []int32) tensor.Tensor {
	return s.SampleAllowed(logits, recent, nil)
}

// SampleAllowed is Sample drawing only among the ids allow (bool [V])
// holds true: a grammar's mask, applied before every filter.
func (s *Sampler) SampleAllowed(logits tensor.Tensor, recent []int32, allow tensor.Tensor) tensor.Tensor {
	b := s.b
	x, negInf := prepare(b, logits, s.suppress, allow, s.vocab)
	if s.p.UsesHistory() && len(recent) > 0 {
		x = s.penalize(x, recent)
	}
	if s.p.Temperature == 0 {
		return b.Reshape(b.Argmax(x, -1), 1)
	}
	logp := b.Sub(x, b.LogSumExp(x, -1, true))
	if s.p.TopP > 0 && s.p.TopP < 1 {
		logp = s.topP(logp, negInf)
	}
	if s.p.MinP > 0 {
		thr := b.Add(b.Max(logp, -1, true), b.Scalar(math.Log(float64(s.p.MinP)), tensor.Float32))
		logp = b.Where(b.Less(logp, thr), negInf, logp)
	}
	if s.p.TopK > 0 && s.p.TopK < s.vocab {
		sorted := b.TakeAlong(logp, b.Argsort(logp, -1), -1)
		kth := b.Slice(sorted, -1, s.vocab-s.p.TopK, s.vocab-s.p.TopK+1)
		logp = b.Where(b.Less(logp, kth), negInf, logp)
	}
	scaled := b.Mul(logp, b.Scalar(1/float64(s.p.Temperature), tensor.Float32))
	s.step++
	return b.Reshape(b.Categorical(scaled, mix(s.p.Seed, s.step)), 1)
}

// topP keeps the smallest set of most likely tokens whose probability mass
// exceeds p: cumulative probability in ascending order > 1-p.
func (s *Sampler) topP(logp, negInf tensor.Tensor) tensor.Tensor {
	b := s.b
	order := b.Argsort(logp, -1)
	cum := b.Cumsum(b.TakeAlong(b.Exp(logp), order, -1), -1)
	cum = b.TakeAlong(cum, b.Argsort(order, -1), -1) // back to vocabulary order
	keep := b.Less(b.Scalar(1-float64(s.p.TopP), tensor.Float32), cum)
	return b.Where(keep, logp, negInf)
}

// penalize divides positive (multiplies negative) logits of recent tokens.
func (s *Sampler) penalize(x tensor.Tensor, recent []int32) tensor.Tensor {
	b := s.b
	if n := s.p.RepetitionContext; n > 0 && len(recent) > n {
		recent = recent[len(recent)-n:]
	}
	m := make([]bool, s.vocab)
	for _, id := range recent {
		if id >= 0 && int(id) < s.vocab {
			m[id] = true
		}
	}
	mask := b.FromBool(m, []int{s.vocab})
	pen := b.Scalar(float64(s.p.RepetitionPenalty), tensor.Float32)
	neg := b.Less(x, b.Scalar(0, tensor.Float32))
	penalized := b.Where(neg, b.Mul(x, pen), b.Div(x, pen))
	return b.Where(mask, penalized, x)
}

// mix derives a per-step seed (splitmix64).
func mix(seed, step uint64) uint64 {
	z := seed + step*0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
