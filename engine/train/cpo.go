package train

// CPO (Xu et al. 2024, "Contrastive Preference Optimization"): DPO's
// sigmoid loss without a reference model, plus the chosen answer's NLL:
//
//	loss = mean (−log σ(β(fc − fr)) + α·(−fc/nc))
//
// as TRL's CPOTrainer (loss_type "sigmoid", cpo_alpha α) and mlx-lm-lora's
// CPO; the NLL is each pair's per-token mean (TRL's is token-weighted over
// the batch: the same when the chosen answers are equally long).
const CPO Method = "cpo"

func init() { register(CPO, cpo{}) }

type cpo struct{}

func (cpo) Rows() RowKind   { return RowsPairs }
func (cpo) Reference() bool { return false }
func (cpo) Params() []Param {
	return []Param{{"beta", 0.1, "scale of the log-likelihood reward"}, {"alpha", 1, "weight of the chosen answer's NLL"}}
}

func (cpo) Metrics() []Metric {
	return []Metric{{Key: "chosen_reward", Label: "chosen reward"}, {Key: "rejected_reward", Label: "rejected reward"},
		{Key: "margin", Label: "reward margin", Chart: true}, {Key: "accuracy", Label: "accuracy"}, {Key: "nll", Label: "NLL"}}
}

func (cpo) Loss(g Group, m []float64) (float64, []float64) {
	beta, alpha, n := g.Opts.Param("beta", 0.1), g.Opts.Param("alpha", 1), float64(g.Groups)
	fc, fr, nc := g.Sums[0], g.Sums[1], float64(g.Tokens[0])
	cr, rj := beta*fc, beta*fr
	k := sigmoid(-(cr - rj)) / n // −∂loss/∂z, z = β(fc − fr)
	m[0] += cr / n
	m[1] += rj / n
	m[2] += (cr - rj) / n
	if cr > rj {
		m[3] += 1 / n
	}
	m[4] += -fc / nc / n
	return (softplus(-(cr - rj)) - alpha*fc/nc) / n, []float64{-k*beta - alpha/nc/n, k * beta}
}
