package autodiff

import "perch/engine/tensor"

// Fused is what a backend may implement for faster gradients (the Go
// backend does): each is one pass over its inputs. Without it, or with a
// tape made by NewComposed, the tape composes them from the backend's
// elementwise ops and reductions.
type Fused interface {
	// GeluTanhGrad is g·gelu_tanh'(x).
	GeluTanhGrad(x, g tensor.Tensor) tensor.Tensor
	// RMSNormGrad is the input gradient of RMSNorm(x, w, eps) for g.
	RMSNormGrad(x, w, g tensor.Tensor, eps float32) tensor.Tensor
	// SoftmaxGrad is y·(g − Σ g·y) over the last axis.
	SoftmaxGrad(y, g tensor.Tensor) tensor.Tensor
	// TakeAlongGrad scatters g [.., K] into zeros of shape [.., D] at idx
	// along the last axis, adding repeats.
	TakeAlongGrad(g, idx tensor.Tensor, shape []int) tensor.Tensor
}

// NewComposed is New without the backend's fused gradients (a reference
// for them).
func NewComposed(b tensor.Backend) *Tape { return &Tape{b: b, composed: true} }

// fused is the backend's Fused, or nil.
func (t *Tape) fused() Fused {
	if f, ok := t.b.(Fused); ok && !t.composed {
		return f
	}
	return nil
}
