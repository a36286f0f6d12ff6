package mlx

import "perch/engine/tensor"

// LinearT is dy @ W: matmul for a dense W, quantized_matmul with
// transpose=false for a quantized one (never dequantized whole). The bias
// plays no part in the input gradient.
func (b *Backend) LinearT(dy tensor.Tensor, l *tensor.Linear) tensor.Tensor {
	if b.err != nil {
		return b.empty
	}
	hd, ok := b.in("linear t", dy)
	if !ok {
		return b.empty
	}
	w, scales, biases, _, ok := b.weights("linear t", l)
	if !ok {
		return b.empty
	}
	h, m := cLinearT(hd, w, scales, biases, l.Bits, l.GroupSize, b.s)
	return b.out("linear t", h, m)
}

// GatherLinearT is GatherLinear's transpose: gather_qmm / gather_mm of dy
// [N, K, Out] with experts idx [N, K] and transpose=false -> [N, K, In].
func (b *Backend) GatherLinearT(dy tensor.Tensor, l *tensor.Linear, idx tensor.Tensor) tensor.Tensor {
	if b.err != nil {
		return b.empty
	}
	hd, ok1 := b.in("gather linear t", dy)
	hi, ok2 := b.in("gather linear t", idx)
	if !ok1 || !ok2 {
		return b.empty
	}
	w, scales, biases, _, ok := b.weights("gather linear t", l)
	if !ok {
		return b.empty
	}
	h, m := cGatherLinearT(hd, w, scales, biases, hi, l.Bits, l.GroupSize, b.s)
	return b.out("gather linear t", h, m)
}
