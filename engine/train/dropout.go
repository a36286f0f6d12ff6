package train

import (
	"math/rand/v2"

	"perch/engine/gemma4"
	"perch/engine/tensor"
)

// LoRA dropout (mlx-lm's: on the adapter's input, x·mask/(1−p), training
// forwards only). A mask is drawn from (Seed, sequence number, target), so
// a layer's recompute in the backward pass sees the mask its forward saw.

// dropout sets layer i's masks for s on ad's LoRAs (when p > 0).
func (t *Trainer) dropout(s *seq, i int, ad gemma4.Adapter) {
	p := t.cfg.LoRA.Dropout
	if p == 0 || len(ad) == 0 || t.grads == nil {
		return
	}
	L := len(s.ids)
	for _, ti := range t.byLayer[i] {
		lo := ad[t.bound.Targets[ti].Linear]
		if lo == nil {
			continue
		}
		in := t.bound.Targets[ti].Linear.In
		rng := rand.New(rand.NewPCG(t.opts.Seed^0x5EED, uint64(s.n)<<20|uint64(ti)))
		v := make([]float32, L*in)
		keep := float32(1 / (1 - p))
		for j := range v {
			if rng.Float64() >= p {
				v[j] = keep
			}
		}
		lo.Dropout = t.b.FromFloat32(v, []int{1, L, in}, tensor.Float32)
		t.dropped = append(t.dropped, lo)
	}
}

// clearDropout removes the masks dropout set.
func (t *Trainer) clearDropout() {
	for _, lo := range t.dropped {
		lo.Dropout = nil
	}
	t.dropped = t.dropped[:0]
}
