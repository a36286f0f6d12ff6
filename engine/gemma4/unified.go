// Port of mlx-vlm's models/gemma4_unified/gemma4_unified.py VisionEmbedder:
// the encoder-free image path of the 12B model (one soft token per 48-px
// patch, no pooling).
//   - Pixels stay in [0, 1] (no 2x-1) and float32 as in mlx-vlm (HF casts
//     them to the weight dtype first).
//   - LayerNorm eps is 1e-5 (torch/MLX default), as HF, mlx-vlm and ollama.
package gemma4

import (
	"fmt"

	"perch/engine/tensor"
)

// unifiedLNEps is nn.LayerNorm's default epsilon.
const unifiedLNEps = 1e-5

// VisionEmbedder is the unified model's patch embedder plus projector.
type VisionEmbedder struct {
	Cfg                  *VisionConfig
	PatchLn1W, PatchLn1B tensor.Tensor
	PatchDense           *tensor.Linear // [E, 3*48*48] with bias
	PatchLn2W, PatchLn2B tensor.Tensor
	PosEmbedding         tensor.Tensor // [P, 2, E]
	PosNormW, PosNormB   tensor.Tensor
	EmbedVision          Embedder
	b                    tensor.Backend
}

// Encode embeds one image's 48-px patches: [real patches, H_text].
func (v *VisionEmbedder) Encode(p *Patches) (tensor.Tensor, error) {
	b, cfg := v.b, v.Cfg
	pd := 3 * cfg.ModelPatchSize * cfg.ModelPatchSize
	if p.N <= 0 || len(p.Data) != p.N*pd || len(p.Positions) != p.N {
		return nil, fmt.Errorf("vision embedder: %d patch values and %d positions for %d patches of %d", len(p.Data), len(p.Positions), p.N, pd)
	}
	P, E := cfg.MMPosembSize, cfg.MMEmbedDim
	x := b.FromFloat32(p.Data, []int{p.N, pd}, tensor.Float32)
	h := b.LayerNorm(x, v.PatchLn1W, v.PatchLn1B, unifiedLNEps)
	h = b.LayerNorm(b.Linear(h, v.PatchDense), v.PatchLn2W, v.PatchLn2B, unifiedLNEps)

	xs, ys := make([]int32, p.N), make([]int32, p.N)
	vx, vy := make([]float32, p.N), make([]float32, p.N)
	real := 0
	for i, pos := range p.Positions {
		if pos[0] >= int32(P) || pos[1] >= int32(P) {
			return nil, fmt.Errorf("vision embedder: patch position (%d, %d) beyond the %d-entry position table", pos[0], pos[1], P)
		}
		xs[i], ys[i] = 2*max(pos[0], 0), 2*max(pos[1], 0)+1
		if pos[0] != -1 {
			vx[i] = 1
		}
		if pos[1] != -1 {
			vy[i] = 1
		}
		if pos[0] != -1 || pos[1] != -1 {
			real = i + 1
		}
	}
	table := b.Reshape(v.PosEmbedding, 2*P, E)
	dt := h.DType()
	xe := b.Mul(b.Take(table, b.FromInt32(xs, []int{p.N}), 0), b.FromFloat32(vx, []int{p.N, 1}, dt))
	ye := b.Mul(b.Take(table, b.FromInt32(ys, []int{p.N}), 0), b.FromFloat32(vy, []int{p.N, 1}, dt))
	h = b.LayerNorm(b.Add(h, b.Add(xe, ye)), v.PosNormW, v.PosNormB, unifiedLNEps)
	feats := v.EmbedVision.forward(b, h)
	if real < p.N {
		feats = b.Slice(feats, 0, 0, real)
	}
	return feats, b.Err()
}
