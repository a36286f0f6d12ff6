package train

import "math"

// ORPO is odds-ratio preference optimisation: per pair with mean log-probs
// lc = fc/nc, lr = fr/nr and log-odds o(l) = l − log(1 − e^l),
// loss = mean (−lc − λ log σ(o(lc) − o(lr))).
const ORPO Method = "orpo"

func init() { register(ORPO, orpo{}) }

type orpo struct{}

func (orpo) Rows() RowKind   { return RowsPairs }
func (orpo) Reference() bool { return false }
func (orpo) Params() []Param {
	return []Param{{"lambda", 0.1, "weight of the odds-ratio term beside the chosen answer's NLL"}}
}

func (orpo) Metrics() []Metric {
	return []Metric{{Key: "chosen_log_odds", Label: "chosen log-odds"}, {Key: "rejected_log_odds", Label: "rejected log-odds"},
		{Key: "log_odds_ratio", Label: "log-odds ratio", Chart: true}, {Key: "nll", Label: "NLL"}}
}

func (orpo) Loss(g Group, m []float64) (float64, []float64) {
	lambda, n := g.Opts.Param("lambda", 0.1), float64(g.Groups)
	nc, nr := float64(g.Tokens[0]), float64(g.Tokens[1])
	lc, lr := math.Min(g.Sums[0]/nc, -1e-8), math.Min(g.Sums[1]/nr, -1e-8)
	oc, or := lc-math.Log1p(-math.Exp(lc)), lr-math.Log1p(-math.Exp(lr))
	u := oc - or
	k := lambda * sigmoid(-u) // −∂(−λ log σ(u))/∂u
	dc := (-1 - k/(1-math.Exp(lc))) / nc / n
	dr := k / (1 - math.Exp(lr)) / nr / n
	m[0] += oc / n
	m[1] += or / n
	m[2] += u / n
	m[3] += -lc / n
	return (-lc + lambda*softplus(-u)) / n, []float64{dc, dr}
}
