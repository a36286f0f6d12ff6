package train

import "math"

// KTO (Ethayarajh et al. 2024, "KTO: Model Alignment as Prospect Theoretic
// Optimization"): unpaired rows, each a completion labelled desirable or
// not. With the log-ratio r = f − f_ref of a row and the reference point
// z0 = max(0, mean over the batch of f − f_ref of each prompt with another
// row's completion), a constant (no gradient flows through it):
//
//	desirable:   λ_D (1 − σ(β(r − z0)))
//	undesirable: λ_U (1 − σ(β(z0 − r)))
//
// averaged over the batch's rows, as TRL's KTOTrainer (loss_type "kto";
// its KL pairs: each prompt with the completion of the row before it).
// Defaults β 0.1, λ_D = λ_U = 1 (TRL's). Thumbs up and down without a
// correction are exactly these rows.
const KTO Method = "kto"

func init() { register(KTO, kto{}) }

type kto struct{}

func (kto) Rows() RowKind   { return RowsUnpaired }
func (kto) Reference() bool { return true }
func (kto) Params() []Param {
	return []Param{{"beta", 0.1, "how far from the base model the adapter may move (higher: closer)"},
		{"desirable_weight", 1, "KTO's λ_D, the weight of desirable rows"},
		{"undesirable_weight", 1, "KTO's λ_U, the weight of undesirable rows"}}
}

func (kto) Metrics() []Metric {
	return []Metric{{Key: "kl", Label: "KL reference point"},
		{Key: "reward", Label: "reward (signed by label)", Chart: true}}
}

// Extra pairs each prompt with the completion of the row before it.
func (kto) Extra(rows []Row) []ExtraSeq {
	out := make([]ExtraSeq, len(rows))
	for i := range rows {
		other := rows[(i+len(rows)-1)%len(rows)].Chosen
		ids := append(append([]int32{}, rows[i].Prompt...), other...)
		out[i] = ExtraSeq{IDs: ids, Start: len(rows[i].Prompt), Row: i}
	}
	return out
}

func (kto) Batch(policy, ref []float64, _ Options) float64 {
	var kl float64
	for i := range policy {
		kl += (policy[i] - ref[i]) / float64(len(policy))
	}
	return math.Max(kl, 0)
}

func (kto) Loss(g Group, m []float64) (float64, []float64) {
	beta, n := g.Opts.Param("beta", 0.1), float64(g.Groups)
	r := g.Sums[0] - g.Refs[0]
	m[0] += g.Batch / n
	if g.Label {
		w := g.Opts.Param("desirable_weight", 1)
		s := sigmoid(beta * (r - g.Batch))
		m[1] += beta * r / n
		return w * (1 - s) / n, []float64{-w * beta * s * (1 - s) / n}
	}
	w := g.Opts.Param("undesirable_weight", 1)
	s := sigmoid(beta * (g.Batch - r))
	m[1] -= beta * r / n
	return w * (1 - s) / n, []float64{w * beta * s * (1 - s) / n}
}
