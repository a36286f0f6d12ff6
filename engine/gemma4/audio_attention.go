package gemma4

import (
	"math"

	"perch/engine/tensor"
)

// AudioAttention is the conformer's chunked local self-attention with
// relative positions (AudioAttention + AudioRelativePositionEmbedding).
//   - Query t sees keys t-P..t+F, P = context_left-1 = 12: 13 keys, as in
//     mlx-vlm (HF transformers allows 12); the golden fixtures follow mlx-vlm.
//   - Logits: 50*tanh((q.k + q.R[t-s])/50), invalid keys -1e9, float32 softmax.
type AudioAttention struct {
	QProj, KProj, VProj, Post ClippableLinear // [H, H]
	RelativeKProj             *tensor.Linear  // [H, H], no clipping
	PerDimScale               tensor.Tensor   // [head_dim]
}

// attentionGeometry: chunk C, past P, future F, context W = C+P+F.
func (a *AudioTower) attentionGeometry() (C, P, F, W int) {
	cfg := a.Cfg
	C, P, F = cfg.AttentionChunkSize, max(0, cfg.AttentionContextLeft-1), cfg.AttentionContextRight
	return C, P, F, C + P + F
}

// audioRelativeSignal is the sinusoid table of the relative positions P, P-1,
// .., -F: [S, H] float32, sin then cos, timescales 1..1e4.
func audioRelativeSignal(b tensor.Backend, cfg *AudioConfig, P, F int) tensor.Tensor {
	half := cfg.HiddenSize / 2
	inc := math.Log(1e4) / float64(max(half-1, 1))
	steps := make([]float32, half)
	for i := range steps {
		steps[i] = float32(i)
	}
	inv := b.Exp(b.Mul(b.FromFloat32(steps, []int{1, half}, tensor.Float32), b.Scalar(-inc, tensor.Float32)))
	S := P + F + 1
	pos := make([]float32, S)
	for i := range pos {
		pos[i] = float32(P - i)
	}
	scaled := b.Mul(b.FromFloat32(pos, []int{S, 1}, tensor.Float32), inv) // [S, H/2]
	return b.Concat(1, b.Sin(scaled), b.Cos(scaled))
}

// attentionMask is the reference's condition: key valid (keys before the
// start or past the end are padding) and inside the local window. Shape
// [1, 1, U, C, W]; block u, query c, context slot w is time u*C + w - P.
func (a *AudioTower) attentionMask(valid []bool) tensor.Tensor {
	C, P, F, W := a.attentionGeometry()
	T := len(valid)
	U := (T + C - 1) / C
	m := make([]bool, U*C*W)
	for u := 0; u < U; u++ {
		for c := 0; c < C; c++ {
			for w := c; w <= c+P+F && w < W; w++ {
				t := u*C + w - P
				m[(u*C+c)*W+w] = t >= 0 && t < T && valid[t]
			}
		}
	}
	return a.b.FromBool(m, []int{1, 1, U, C, W})
}

// audioContextIndices selects, for each block u, the W padded times u*C + 0..W-1.
func audioContextIndices(b tensor.Backend, U, C, W int) tensor.Tensor {
	idx := make([]int32, U*W)
	for u := 0; u < U; u++ {
		for w := 0; w < W; w++ {
			idx[u*W+w] = int32(u*C + w)
		}
	}
	return b.FromInt32(idx, []int{U, W})
}

func (at *AudioAttention) forward(a *AudioTower, x, mask tensor.Tensor, T int) tensor.Tensor {
	b, cfg := a.b, a.Cfg
	N, D := cfg.NumAttentionHeads, cfg.HeadDim()
	C, P, F, W := a.attentionGeometry()
	U := (T + C - 1) / C
	f32 := tensor.Float32

	q := b.Reshape(b.AsType(at.QProj.forward(b, x), f32), 1, T, N, D) // [1, T, N, D]
	k := b.Reshape(b.AsType(at.KProj.forward(b, x), f32), 1, T, N, D)
	v := b.Reshape(b.AsType(at.VProj.forward(b, x), f32), 1, T, N, D)

	scale := b.Softplus(at.PerDimScale) // [D]
	scale = b.Mul(b.Scalar(math.Pow(float64(D), -0.5)/math.Ln2, scale.DType()), scale)
	q = b.Mul(q, scale)
	k = b.Mul(k, b.Scalar(math.Log(1+math.E)/math.Ln2, f32))

	qb := b.Reshape(b.Pad(q, 1, 0, U*C-T, 0), 1, U, C, N, D) // [1, U, C, N, D]
	idx := audioContextIndices(b, U, C, W)
	kb := b.Take(b.Pad(k, 1, P, F+C-1, 0), idx, 1) // [1, U, W, N, D]
	vb := b.Take(b.Pad(v, 1, P, F+C-1, 0), idx, 1)

	logits := at.relativeLogits(a, qb, kb, U) // [1, N, U, C, W]
	capT := b.Scalar(cfg.AttentionLogitCap, f32)
	logits = b.Mul(b.Tanh(b.Div(logits, capT)), capT)
	logits = b.Where(mask, logits, b.Scalar(cfg.AttentionInvalidLogitsValue, f32))
	probs := b.Softmax(logits, -1)

	ctx := b.MatMul(probs, b.Transpose(vb, 0, 3, 1, 2, 4))        // [1, N, U, C, D]
	ctx = b.Reshape(b.Transpose(ctx, 0, 2, 3, 1, 4), 1, U*C, N*D) // [1, U*C, H]
	ctx = b.Slice(ctx, 1, 0, T)
	return at.Post.forward(b, ctx)
}

// relativeLogits is q.k plus the relative-position term q.R[d], brought
// into the context layout by the Transformer-XL shift (pad, flatten, crop).
func (at *AudioAttention) relativeLogits(a *AudioTower, qb, kb tensor.Tensor, U int) tensor.Tensor {
	b, cfg := a.b, a.Cfg
	N, D := cfg.NumAttentionHeads, cfg.HeadDim()
	C, P, F, W := a.attentionGeometry()
	S := P + F + 1

	// The reference projects the signal in relative_k_proj's dtype.
	sig := b.AsType(a.relSignal, activationDType(at.RelativeKProj))
	rk := b.Reshape(b.AsType(b.Linear(sig, at.RelativeKProj), tensor.Float32), S, N, D) // [S, N, D]

	qp := b.Transpose(qb, 0, 3, 1, 2, 4)                                  // [1, N, U, C, D]
	ac := b.MatMul(qp, b.Transpose(kb, 0, 3, 1, 4, 2))                    // [1, N, U, C, W]
	bd := b.MatMul(b.Reshape(qp, 1, N, U*C, D), b.Transpose(rk, 1, 2, 0)) // [1, N, U*C, S]

	bd = b.Pad(b.Reshape(bd, 1, N, U, C, S), 4, 0, W+1-S, 0) // [1, N, U, C, W+1]
	bd = b.Slice(b.Reshape(bd, 1, N, U, C*(W+1)), 3, 0, C*W)
	bd = b.Reshape(bd, 1, N, U, C, W) // bd[c, w] = q_c . R[c+P-w] inside the window
	return b.Add(ac, bd)
}
