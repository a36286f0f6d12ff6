package autodiff

import "perch/engine/tensor"

// NewComposed is New without the backend's fused gradients (a reference
// for them).
func NewComposed(b tensor.Backend) *Tape { return &Tape{b: b, composed: true} }

// fused is the backend's fused kernels (tensor.Fused), or nil: without
// them, or with a tape made by NewComposed, the tape composes each
// gradient from the backend's elementwise ops and reductions.
func (t *Tape) fused() tensor.Fused {
	if t.composed {
		return nil
	}
	return tensor.FusedOf(t.b)
}
