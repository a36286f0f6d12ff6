// Port of mlx-vlm's models/gemma4/vision.py (the SigLIP-style tower of
// E2B/E4B/26B/31B) and of embed_vision (models/gemma4/gemma4.py).
//   - q/k/v norms are the decomposed float32 RMSNorm of the reference
//     (multiply by the weight in float32, one rounding); block norms use the
//     backend's RMSNorm like mx.fast.rms_norm.
//   - 2-D RoPE: head_dim splits into an x half and a y half, each rotated by
//     rotate_half within itself (theta from rope_parameters).
//   - Patches are embedded unpadded, one image at a time; with (-1,-1)
//     padding rows the reference's additive -1e4 mask is applied.
//   - ensure_fused_sdpa's head-dim padding is a kernel-choice detail with no
//     effect on the result; it is not reproduced.
package gemma4

import (
	"fmt"
	"math"

	"perch/engine/tensor"
)

// ClippableLinear clamps its input and output when the clip scalars exist.
type ClippableLinear struct {
	Linear                                   *tensor.Linear
	InputMin, InputMax, OutputMin, OutputMax tensor.Tensor // 0-d, or nil when not clipped
}

func (c *ClippableLinear) forward(b tensor.Backend, x tensor.Tensor) tensor.Tensor {
	if c.InputMin != nil {
		x = b.Minimum(b.Maximum(x, c.InputMin), c.InputMax)
	}
	y := b.Linear(x, c.Linear)
	if c.OutputMin != nil {
		y = b.Minimum(b.Maximum(y, c.OutputMin), c.OutputMax)
	}
	return y
}

// Embedder projects tower features into the text space:
// embedding_projection(rms_norm_no_scale(x)).
type Embedder struct {
	EmbeddingProjection *tensor.Linear
	eps                 float32
}

func (e *Embedder) forward(b tensor.Backend, x tensor.Tensor) tensor.Tensor {
	return b.Linear(b.RMSNorm(x, nil, e.eps), e.EmbeddingProjection)
}

// VisionLayer is one encoder block.
type VisionLayer struct {
	InputLayernorm, PostAttentionLayernorm            tensor.Tensor
	PreFeedforwardLayernorm, PostFeedforwardLayernorm tensor.Tensor
	QProj, KProj, VProj, OProj                        ClippableLinear
	QNorm, KNorm                                      tensor.Tensor
	GateProj, UpProj, DownProj                        ClippableLinear
}

// VisionTower is the gemma4_vision encoder plus its projector.
type VisionTower struct {
	Cfg                    *VisionConfig
	InputProj              *tensor.Linear // [D, 3*p*p]
	PositionEmbeddingTable tensor.Tensor  // [2, P, D]
	Layers                 []*VisionLayer
	StdBias, StdScale      tensor.Tensor // [D] when standardize
	EmbedVision            Embedder
	b                      tensor.Backend
}

// Patches is one image (or video frame) ready for a tower.
type Patches struct {
	Data      []float32  // [N, patchDim], pixel values in [0, 1]
	Positions [][2]int32 // (x, y) per patch; (-1, -1) marks padding
	N         int
}

// Encode runs the tower and the projector over one image: [tokens, H_text].
func (v *VisionTower) Encode(p *Patches) (tensor.Tensor, error) {
	b, cfg := v.b, v.Cfg
	D, pd := cfg.HiddenSize, 3*cfg.PatchSize*cfg.PatchSize
	if p.N <= 0 || len(p.Data) != p.N*pd || len(p.Positions) != p.N {
		return nil, fmt.Errorf("vision tower: %d patch values and %d positions for %d patches of %d", len(p.Data), len(p.Positions), p.N, pd)
	}
	pool := cfg.PoolingKernelSize * cfg.PoolingKernelSize
	if p.N%pool != 0 {
		return nil, fmt.Errorf("vision tower: %d patches is not a multiple of the %dx%d pooling", p.N, cfg.PoolingKernelSize, cfg.PoolingKernelSize)
	}
	dt := activationDType(v.InputProj)
	x := b.FromFloat32(p.Data, []int{1, p.N, pd}, tensor.Float32)
	x = b.Mul(b.Scalar(2, tensor.Float32), b.Sub(x, b.Scalar(0.5, tensor.Float32)))
	h := b.Linear(b.AsType(x, dt), v.InputProj) // [1, N, D]
	h = b.Add(h, v.positionEmbeddings(p))

	valid, padded := validPatches(p)
	var mask tensor.Mask
	if padded {
		mask = tensor.Mask{Kind: tensor.MaskArray, Array: paddingMask(b, valid, h.DType())}
	}
	pos := v.ropeTables(p, h.DType())
	for _, l := range v.Layers {
		mark := b.Mark()
		h = l.forward(v, h, pos, mask)
		b.SweepSince(mark, h) // intermediates live only as long as the graph needs them
	}

	if padded {
		h = b.Where(b.Reshape(b.FromBool(valid, []int{p.N}), 1, p.N, 1), h, b.Scalar(0, h.DType()))
	}
	out, kept := poolByPosition(b, h, p, valid, cfg.PoolingKernelSize, p.N/pool)
	out = b.Mul(out, b.Scalar(math.Sqrt(float64(D)), out.DType()))
	if kept < p.N/pool {
		out = b.Slice(out, 1, 0, kept)
	}
	if cfg.Standardize {
		out = b.Mul(b.Sub(out, v.StdBias), v.StdScale)
	}
	feats := v.EmbedVision.forward(b, out)
	feats = b.Reshape(feats, kept, feats.Shape()[2])
	return feats, b.Err()
}

// positionEmbeddings adds table[0][x] + table[1][y], zero for padding: [1, N, D].
func (v *VisionTower) positionEmbeddings(p *Patches) tensor.Tensor {
	b := v.b
	P, D := v.Cfg.PositionEmbeddingSize, v.Cfg.HiddenSize
	xs, ys := make([]int32, p.N), make([]int32, p.N)
	for i, pos := range p.Positions {
		xs[i], ys[i] = max(pos[0], 0), int32(P)+max(pos[1], 0)
	}
	table := b.Reshape(v.PositionEmbeddingTable, 2*P, D)
	e := b.Add(b.Take(table, b.FromInt32(xs, []int{p.N}), 0), b.Take(table, b.FromInt32(ys, []int{p.N}), 0))
	valid, padded := validPatches(p)
	if padded {
		e = b.Where(b.Reshape(b.FromBool(valid, []int{p.N}), p.N, 1), e, b.Scalar(0, e.DType()))
	}
	return b.Reshape(e, 1, p.N, D)
}

func validPatches(p *Patches) ([]bool, bool) {
	valid := make([]bool, p.N)
	padded := false
	for i, pos := range p.Positions {
		valid[i] = !(pos[0] == -1 && pos[1] == -1)
		padded = padded || !valid[i]
	}
	return valid, padded
}

// paddingMask is the additive [1, 1, N, N] mask: 0 between valid patches, -1e4 otherwise.
func paddingMask(b tensor.Backend, valid []bool, dt tensor.DType) tensor.Tensor {
	n := len(valid)
	m := make([]float32, n*n)
	for q := range valid {
		for k := range valid {
			if !(valid[q] && valid[k]) {
				m[q*n+k] = -1e4
			}
		}
	}
	return b.FromFloat32(m, []int{1, 1, n, n}, dt)
}

// rope2D holds the cos/sin tables of each spatial half: [1, N, 1, c].
type rope2D struct{ cos, sin [2]tensor.Tensor }

func (v *VisionTower) ropeTables(p *Patches, dt tensor.DType) *rope2D {
	b := v.b
	c := 2 * (v.Cfg.HeadDim / 4) // channels per spatial dimension
	half := c / 2
	exps := make([]float32, half)
	for i := range exps {
		exps[i] = float32(i) * (2 / float32(c))
	}
	timescale := b.Pow(b.Scalar(v.Cfg.RopeParameters.RopeTheta, tensor.Float32), b.FromFloat32(exps, []int{half}, tensor.Float32))
	r := &rope2D{}
	for d := 0; d < 2; d++ {
		pos := make([]float32, p.N)
		for i, xy := range p.Positions {
			pos[i] = float32(xy[d])
		}
		arg := b.Div(b.FromFloat32(pos, []int{p.N, 1}, tensor.Float32), timescale) // [N, half]
		cos, sin := b.Cos(arg), b.Sin(arg)
		r.cos[d] = b.Reshape(b.AsType(b.Concat(-1, cos, cos), dt), 1, p.N, 1, c)
		r.sin[d] = b.Reshape(b.AsType(b.Concat(-1, sin, sin), dt), 1, p.N, 1, c)
	}
	return r
}

// apply rotates x [1, N, heads, hd] part by part.
func (r *rope2D) apply(b tensor.Backend, x tensor.Tensor) tensor.Tensor {
	c := r.cos[0].Shape()[3]
	parts := make([]tensor.Tensor, 2)
	for d := 0; d < 2; d++ {
		xp := b.Slice(x, -1, d*c, (d+1)*c)
		x1, x2 := b.Slice(xp, -1, 0, c/2), b.Slice(xp, -1, c/2, c)
		rot := b.Concat(-1, b.Mul(x2, b.Scalar(-1, x.DType())), x1)
		parts[d] = b.Add(b.Mul(xp, r.cos[d]), b.Mul(rot, r.sin[d]))
	}
	return b.Concat(-1, parts...)
}

// rmsF32 is the reference's VisionRMSNorm: float32 normalise, float32 weight, one cast.
func rmsF32(b tensor.Backend, x, w tensor.Tensor, eps float32) tensor.Tensor {
	xf := b.AsType(x, tensor.Float32)
	var wf tensor.Tensor
	if w != nil {
		wf = b.AsType(w, tensor.Float32)
	}
	return b.AsType(b.RMSNorm(xf, wf, eps), x.DType())
}

func (l *VisionLayer) forward(v *VisionTower, x tensor.Tensor, rope *rope2D, mask tensor.Mask) tensor.Tensor {
	b, cfg := v.b, v.Cfg
	eps := float32(cfg.RMSNormEps)
	N, nH, nKV, hd := x.Shape()[1], cfg.NumAttentionHeads, cfg.NumKeyValueHeads, cfg.HeadDim

	n := b.RMSNorm(x, l.InputLayernorm, eps)
	q := b.Reshape(l.QProj.forward(b, n), 1, N, nH, hd)
	k := b.Reshape(l.KProj.forward(b, n), 1, N, nKV, hd)
	val := b.Reshape(l.VProj.forward(b, n), 1, N, nKV, hd)
	q = rope.apply(b, rmsF32(b, q, l.QNorm, eps))
	k = rope.apply(b, rmsF32(b, k, l.KNorm, eps))
	val = rmsF32(b, val, nil, eps)
	o := b.SDPA(b.Transpose(q, 0, 2, 1, 3), b.Transpose(k, 0, 2, 1, 3), b.Transpose(val, 0, 2, 1, 3), 1.0, mask)
	o = b.Reshape(b.Transpose(o, 0, 2, 1, 3), 1, N, nH*hd)
	h := b.Add(x, b.RMSNorm(l.OProj.forward(b, o), l.PostAttentionLayernorm, eps))

	m := b.RMSNorm(h, l.PreFeedforwardLayernorm, eps)
	f := l.DownProj.forward(b, tensor.GeluMul(b, l.GateProj.forward(b, m), l.UpProj.forward(b, m)))
	return b.Add(h, b.RMSNorm(f, l.PostFeedforwardLayernorm, eps))
}

// poolByPosition averages each k x k block of patches by their positions
// (kernel index = x//k + ((max x + 1)//k) * (y//k)), in float32, returning
// [1, length, D] and how many pooled tokens received a patch.
func poolByPosition(b tensor.Backend, h tensor.Tensor, p *Patches, valid []bool, k, length int) (tensor.Tensor, int) {
	maxX := int32(0)
	for _, pos := range p.Positions {
		maxX = max(maxX, pos[0])
	}
	w := make([]float32, length*p.N)
	used := make([]bool, length)
	inv := 1 / float32(k*k)
	for i, pos := range p.Positions {
		x, y := max(pos[0], 0), max(pos[1], 0)
		idx := int(x)/k + int(maxX+1)/k*(int(y)/k)
		if idx < length {
			w[idx*p.N+i] = inv
			used[idx] = true
		}
	}
	kept := 0
	for kept < length && used[kept] {
		kept++
	}
	out := b.MatMul(b.FromFloat32(w, []int{1, length, p.N}, tensor.Float32), b.AsType(h, tensor.Float32))
	return b.AsType(out, h.DType()), kept
}
