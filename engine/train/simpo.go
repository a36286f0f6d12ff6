package train

// SimPO (Meng et al. 2024, "SimPO: Simple Preference Optimization with a
// Reference-Free Reward"): the reward is the length-normalised
// log-likelihood, no reference model. Per pair with lc = fc/nc, lr = fr/nr:
//
//	z = β(lc − lr) − γ,  loss = mean −log σ(z)
//
// as TRL's CPOTrainer with loss_type "simpo" (logits (lc − lr) − γ/β,
// scaled by β) and cpo_alpha 0. Defaults β 2, γ 1: the paper's Llama-3
// base setting (its γ/β of about 0.5).
const SimPO Method = "simpo"

func init() { register(SimPO, simpo{}) }

type simpo struct{}

func (simpo) Rows() RowKind   { return RowsPairs }
func (simpo) Reference() bool { return false }
func (simpo) Params() []Param {
	return []Param{{"beta", 2, "scale of the length-normalised reward"}, {"gamma", 1, "target reward margin"}}
}

func (simpo) Metrics() []Metric {
	return []Metric{{Key: "chosen_reward", Label: "chosen reward"}, {Key: "rejected_reward", Label: "rejected reward"},
		{Key: "margin", Label: "reward margin", Chart: true}, {Key: "accuracy", Label: "accuracy"}}
}

func (simpo) Loss(g Group, m []float64) (float64, []float64) {
	beta, gamma, n := g.Opts.Param("beta", 2), g.Opts.Param("gamma", 1), float64(g.Groups)
	nc, nr := float64(g.Tokens[0]), float64(g.Tokens[1])
	cr, rj := beta*g.Sums[0]/nc, beta*g.Sums[1]/nr
	z := cr - rj - gamma
	k := sigmoid(-z) / n // −∂loss/∂z
	m[0] += cr / n
	m[1] += rj / n
	m[2] += (cr - rj) / n
	if cr > rj {
		m[3] += 1 / n
	}
	return softplus(-z) / n, []float64{-k * beta / nc, k * beta / nr}
}
