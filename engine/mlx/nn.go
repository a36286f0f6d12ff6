package mlx

import "perch/engine/tensor"

// weights resolves a Linear's handles: W, Scales, Biases (quantized only)
// and the optional Bias.
func (b *Backend) weights(op string, l *tensor.Linear) (w, scales, biases, bias handle, ok bool) {
	if l == nil {
		b.fail(op, "nil weight")
		return
	}
	if w, ok = b.in(op, l.W); !ok {
		return
	}
	if l.Quantized() {
		if l.Bits != 4 && l.Bits != 8 || l.GroupSize <= 0 {
			b.fail(op, "unsupported quantization bits=%d group_size=%d", l.Bits, l.GroupSize)
			return w, scales, biases, bias, false
		}
		if scales, ok = b.in(op, l.Scales); !ok {
			return
		}
		if biases, ok = b.opt(op, l.Biases); !ok {
			return
		}
	}
	bias, ok = b.opt(op, l.Bias)
	return
}

// Linear is mlx.nn.Linear (addmm(bias, x, W.T) or x @ W.T) or
// mlx.nn.QuantizedLinear (quantized_matmul(transpose=true, "affine"), + bias).
func (b *Backend) Linear(x tensor.Tensor, l *tensor.Linear) tensor.Tensor {
	if b.err != nil {
		return b.empty
	}
	hx, ok := b.in("linear", x)
	if !ok {
		return b.empty
	}
	w, scales, biases, bias, ok := b.weights("linear", l)
	if !ok {
		return b.empty
	}
	h, m := cLinear(hx, w, scales, biases, bias, l.Bits, l.GroupSize, b.s)
	return b.out("linear", h, m)
}

// GatherLinear is mlx-vlm's (Quantized)SwitchLinear: gather_qmm / gather_mm
// of x [N, K|1, In] with experts idx [N, K] -> [N, K, Out], unsorted indices.
func (b *Backend) GatherLinear(x tensor.Tensor, l *tensor.Linear, idx tensor.Tensor) tensor.Tensor {
	if b.err != nil {
		return b.empty
	}
	hx, ok1 := b.in("gather linear", x)
	hi, ok2 := b.in("gather linear", idx)
	if !ok1 || !ok2 {
		return b.empty
	}
	w, scales, biases, bias, ok := b.weights("gather linear", l)
	if !ok {
		return b.empty
	}
	h, m := cGatherLinear(hx, w, scales, biases, bias, hi, l.Bits, l.GroupSize, b.s)
	return b.out("gather linear", h, m)
}

// Embedding is mlx.nn.Embedding (take rows) or QuantizedEmbedding
// (dequantize of the taken rows, in the scales' dtype).
func (b *Backend) Embedding(l *tensor.Linear, ids tensor.Tensor) tensor.Tensor {
	if b.err != nil {
		return b.empty
	}
	hi, ok := b.in("embedding", ids)
	if !ok {
		return b.empty
	}
	w, scales, biases, _, ok := b.weights("embedding", l)
	if !ok {
		return b.empty
	}
	h, m := cEmbedding(w, scales, biases, hi, l.Bits, l.GroupSize, b.s)
	return b.out("embedding", h, m)
}

// RMSNorm is mlx.fast.rms_norm over the last axis; w may be nil.
func (b *Backend) RMSNorm(x, w tensor.Tensor, eps float32) tensor.Tensor {
	if b.err != nil {
		return b.empty
	}
	hx, ok1 := b.in("rms norm", x)
	hw, ok2 := b.opt("rms norm", w)
	if !ok1 || !ok2 {
		return b.empty
	}
	h, m := cRMSNorm(hx, hw, eps, b.s)
	return b.out("rms norm", h, m)
}

// LayerNorm is mlx.fast.layer_norm over the last axis; w and bias may be nil.
func (b *Backend) LayerNorm(x, w, bias tensor.Tensor, eps float32) tensor.Tensor {
	if b.err != nil {
		return b.empty
	}
	hx, ok1 := b.in("layer norm", x)
	hw, ok2 := b.opt("layer norm", w)
	hb, ok3 := b.opt("layer norm", bias)
	if !ok1 || !ok2 || !ok3 {
		return b.empty
	}
	h, m := cLayerNorm(hx, hw, hb, eps, b.s)
	return b.out("layer norm", h, m)
}

// RoPE is mlx.fast.rope: with freqs the base is unset and freqs (dims/2
// float32 values) are used, else inv_freq = base^(-2i/dims).
func (b *Backend) RoPE(x tensor.Tensor, dims int, traditional bool, base, scale float32, offset int, freqs tensor.Tensor) tensor.Tensor {
	if b.err != nil {
		return b.empty
	}
	hx, ok1 := b.in("rope", x)
	hf, ok2 := b.opt("rope", freqs)
	if !ok1 || !ok2 {
		return b.empty
	}
	h, m := cRoPE(hx, dims, traditional, isNull(hf), base, scale, offset, hf, b.s)
	return b.out("rope", h, m)
}

// SDPA is mlx.fast.scaled_dot_product_attention with mask mode "", "causal"
// or "array", and no sinks.
func (b *Backend) SDPA(q, k, v tensor.Tensor, scale float32, mask tensor.Mask) tensor.Tensor {
	if b.err != nil {
		return b.empty
	}
	hq, ok1 := b.in("sdpa", q)
	hk, ok2 := b.in("sdpa", k)
	hv, ok3 := b.in("sdpa", v)
	if !ok1 || !ok2 || !ok3 {
		return b.empty
	}
	var hm handle
	switch mask.Kind {
	case tensor.MaskNone, tensor.MaskCausal:
	case tensor.MaskArray:
		var ok bool
		if hm, ok = b.in("sdpa mask", mask.Array); !ok {
			return b.empty
		}
	default:
		b.fail("sdpa", "unknown mask kind %d", mask.Kind)
		return b.empty
	}
	h, m := cSDPA(hq, hk, hv, scale, int(mask.Kind), hm, b.s)
	return b.out("sdpa", h, m)
}

// Conv1D is mlx.conv1d: x [B, T, Cin], w [Cout, K, Cin/groups].
func (b *Backend) Conv1D(x, w tensor.Tensor, stride, padding, groups int) tensor.Tensor {
	return b.conv("conv1d", x, w, 1, stride, 1, padding, 0, groups)
}

// Conv2D is mlx.conv2d (NHWC): x [B, H, W, Cin], w [Cout, kH, kW, Cin].
func (b *Backend) Conv2D(x, w tensor.Tensor, strideH, strideW, padH, padW int) tensor.Tensor {
	return b.conv("conv2d", x, w, 2, strideH, strideW, padH, padW, 1)
}

func (b *Backend) conv(op string, x, w tensor.Tensor, nd, s0, s1, p0, p1, groups int) tensor.Tensor {
	if b.err != nil {
		return b.empty
	}
	hx, ok1 := b.in(op, x)
	hw, ok2 := b.in(op, w)
	if !ok1 || !ok2 {
		return b.empty
	}
	h, m := cConv(hx, hw, nd, s0, s1, p0, p1, groups, b.s)
	return b.out(op, h, m)
}
