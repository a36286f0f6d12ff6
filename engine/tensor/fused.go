package tensor

// Fused is the fused kernels a backend may offer (the Go backend does):
// the input gradients of a few ops in one pass each, and the output head's
// softcapped log-softmax, which may decline a case (ok false). Callers
// take them through FusedOf and compose the plain ops otherwise.
type Fused interface {
	// GeluTanhGrad is g·gelu_tanh'(x).
	GeluTanhGrad(x, g Tensor) Tensor
	// RMSNormGrad is the input gradient of RMSNorm(x, w, eps) for g.
	RMSNormGrad(x, w, g Tensor, eps float32) Tensor
	// SoftmaxGrad is y·(g − Σ g·y) over the last axis.
	SoftmaxGrad(y, g Tensor) Tensor
	// TakeAlongGrad scatters g [.., K] into zeros of shape [.., D] at idx
	// along the last axis, adding repeats.
	TakeAlongGrad(g, idx Tensor, shape []int) Tensor
	// SoftcapLogSoftmax is, for one block of raw logits z [n, blk], the
	// log-sum-exp of c·tanh(z/c) [n, 1] and, with grad, its softmax times
	// the cap's derivative [n, blk].
	SoftcapLogSoftmax(z Tensor, c float32, grad bool) (lse, pd Tensor, ok bool)
	// Softcap is c·tanh(x/c) in one pass, the bits of Softcap's plain ops.
	Softcap(x Tensor, c float32) Tensor
	// GeluMul is GeluTanh(g)·u in one pass, the bits of those two ops.
	GeluMul(g, u Tensor) Tensor
}

// Softcap is c·tanh(x/c): the backend's fused kernel where it has one,
// else Div, Tanh and Mul by a scalar of x's type.
func Softcap(b Backend, x Tensor, c float32) Tensor {
	if f := FusedOf(b); f != nil {
		return f.Softcap(x, c)
	}
	capT := b.Scalar(float64(c), x.DType())
	return b.Mul(b.Tanh(b.Div(x, capT)), capT)
}

// GeluMul is GeluTanh(g)·u (a gated MLP's hidden layer): the backend's
// fused kernel where it has one, else the two ops.
func GeluMul(b Backend, g, u Tensor) Tensor {
	if f := FusedOf(b); f != nil {
		return f.GeluMul(g, u)
	}
	return b.Mul(b.GeluTanh(g), u)
}

// FusedOf is b's fused kernels, nil when it has none.
func FusedOf(b Backend) Fused {
	f, _ := b.(Fused)
	return f
}
