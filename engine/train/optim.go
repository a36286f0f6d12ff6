package train

import (
	"fmt"
	"math"
	"strings"
)

// The optimizer: MLX's AdamW (betas 0.9/0.999, eps 1e-8, decoupled weight
// decay, no bias correction) in float32 on the host, after MLX's
// clip_grad_norm over all leaves. LoRA+ is one policy for every method: a
// leaf is in group A (lora_a, learning rate lr) or B (lora_b, lr·ratio); a
// ratio of 1 gives every leaf the same rate, which is plain LoRA.

const (
	adamBeta1 = 0.9
	adamBeta2 = 0.999
	adamEps   = 1e-8
	clipEps   = 1e-6 // clip_grad_norm's max_norm / (norm + 1e-6)
)

// adamw is the optimizer state of every leaf.
type adamw struct {
	m, v  [][]float32
	isB   []bool // leaf is a lora_b (LoRA+ group B)
	ratio float64
	wd    float32
}

// newAdamW checks the leaves against the targets: names[i] must end in
// .lora_a or .lora_b, and there must be one of each per target.
func newAdamW(names []string, sizes []int, targets int, ratio, wd float64) (*adamw, error) {
	o := &adamw{ratio: ratio, wd: float32(wd)}
	nb := 0
	for i, n := range names {
		switch {
		case strings.HasSuffix(n, ".lora_b"):
			o.isB = append(o.isB, true)
			nb++
		case strings.HasSuffix(n, ".lora_a"):
			o.isB = append(o.isB, false)
		default:
			return nil, fmt.Errorf("optimizer: leaf %q is neither a lora_a nor a lora_b", n)
		}
		o.m = append(o.m, make([]float32, sizes[i]))
		o.v = append(o.v, make([]float32, sizes[i]))
	}
	if len(names) != 2*targets || nb != targets {
		return nil, fmt.Errorf("optimizer: %d leaves (%d lora_b) for %d adapted projections; want one lora_a and one lora_b each", len(names), nb, targets)
	}
	return o, nil
}

// globalNorm is sqrt(Σ g²) over all leaves.
func globalNorm(grads [][]float32) float64 {
	var s float64
	for _, g := range grads {
		for _, x := range g {
			s += float64(x) * float64(x)
		}
	}
	return math.Sqrt(s)
}

// clip scales grads in place as mlx.optimizers.clip_grad_norm does: by
// maxNorm / (norm + 1e-6) unless norm < maxNorm. maxNorm 0 leaves them.
func clip(grads [][]float32, norm, maxNorm float64) {
	if maxNorm <= 0 || norm < maxNorm {
		return
	}
	k := float32(maxNorm) / (float32(norm) + float32(clipEps))
	for _, g := range grads {
		for i := range g {
			g[i] *= k
		}
	}
}

// update applies one AdamW step at learning rate lr (group A; group B
// gets lr·ratio) to every leaf, in float32 as MLX computes it:
// w ← w·(1 − a·wd); m ← b1·m + (1−b1)·g; v ← b2·v + (1−b2)·g²;
// w ← w − a·m / (sqrt(v) + eps).
func (o *adamw) update(leaves, grads [][]float32, lr float64) {
	b1, b2 := float32(adamBeta1), float32(adamBeta2)
	c1, c2 := float32(1-adamBeta1), float32(1-adamBeta2)
	eps := float32(adamEps)
	for i, w := range leaves {
		a := float32(lr)
		if o.isB[i] {
			a = float32(lr * o.ratio)
		}
		decay := 1 - float32(a*o.wd)
		m, v, g := o.m[i], o.v[i], grads[i]
		for j := range w {
			x := float32(w[j] * decay)
			m[j] = float32(b1*m[j]) + float32(c1*g[j])
			v[j] = float32(b2*v[j]) + float32(c2*float32(g[j]*g[j]))
			w[j] = x - float32(a*m[j])/(float32(math.Sqrt(float64(v[j])))+eps)
		}
	}
}

// clone copies the optimizer state.
func (o *adamw) clone() *adamw {
	c := *o
	c.m, c.v = make([][]float32, len(o.m)), make([][]float32, len(o.v))
	for i := range o.m {
		c.m[i] = append([]float32(nil), o.m[i]...)
		c.v[i] = append([]float32(nil), o.v[i]...)
	}
	return &c
}
