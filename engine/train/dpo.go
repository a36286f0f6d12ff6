package train

// DPO is direct preference optimisation (sigmoid), the reference the
// adapter switched off: per pair z = β((pc − pr) − (rc − rr)), loss =
// mean −log σ(z).
const DPO Method = "dpo"

func init() { register(DPO, dpo{}) }

type dpo struct{}

func (dpo) Rows() RowKind   { return RowsPairs }
func (dpo) Reference() bool { return true }
func (dpo) Params() []Param {
	return []Param{{"beta", 0.1, "how far from the base model the adapter may move (higher: closer)"}}
}

func (dpo) Metrics() []Metric {
	return []Metric{{Key: "chosen_reward", Label: "chosen reward"}, {Key: "rejected_reward", Label: "rejected reward"},
		{Key: "margin", Label: "reward margin", Chart: true}, {Key: "accuracy", Label: "accuracy"}}
}

func (dpo) Loss(g Group, m []float64) (float64, []float64) {
	beta, n := g.Opts.Param("beta", 0.1), float64(g.Groups)
	pc, pr, rc, rr := g.Sums[0], g.Sums[1], g.Refs[0], g.Refs[1]
	z := beta * ((pc - pr) - (rc - rr))
	d := -beta * sigmoid(-z) / n // ∂loss/∂pc; ∂loss/∂pr = −d
	cr, rj := beta*(pc-rc), beta*(pr-rr)
	m[0] += cr / n
	m[1] += rj / n
	m[2] += (cr - rj) / n
	if cr > rj {
		m[3] += 1 / n
	}
	return softplus(-z) / n, []float64{d, -d}
}
