package gemma4

import (
	"fmt"

	"perch/engine/tensor"
)

// Splice overwrites the rows of embeds [1, L, H] at rows (ascending) with
// the rows of feats [len(rows), H], in order, cast to embeds' dtype. The
// features go in unscaled, as in mlx-vlm and HF (the text rows carry the
// sqrt(H) embedding scale; tower outputs do not).
func Splice(b tensor.Backend, embeds, feats tensor.Tensor, rows []int) (tensor.Tensor, error) {
	L, H := embeds.Shape()[1], embeds.Shape()[2]
	fs := feats.Shape()
	if len(fs) != 2 || fs[1] != H {
		return nil, fmt.Errorf("splice: features %v do not have %d columns", fs, H)
	}
	if fs[0] != len(rows) {
		return nil, fmt.Errorf("splice: %d placeholder tokens but the encoders produced %d feature rows", len(rows), fs[0])
	}
	feats = b.AsType(feats, embeds.DType())
	for i := 0; i < len(rows); {
		j := i + 1
		for j < len(rows) && rows[j] == rows[j-1]+1 {
			j++
		}
		if rows[i] < 0 || rows[j-1] >= L || (i > 0 && rows[i] <= rows[i-1]) {
			return nil, fmt.Errorf("splice: placeholder rows out of order or range")
		}
		run := b.Reshape(b.Slice(feats, 0, i, j), 1, j-i, H)
		embeds = b.SliceUpdate(embeds, run, 1, rows[i])
		i = j
	}
	return embeds, b.Err()
}
