package train

// SFT is cross-entropy over the response tokens: loss = −Σ_rows f / N, N
// the batch's counted tokens (padding never counts: rows are unpadded).
const SFT Method = "sft"

func init() { register(SFT, sft{}) }

type sft struct{}

func (sft) Rows() RowKind     { return RowsSFT }
func (sft) Reference() bool   { return false }
func (sft) Params() []Param   { return nil }
func (sft) Metrics() []Metric { return nil }

func (sft) Loss(g Group, _ []float64) (float64, []float64) {
	n := float64(g.Counted)
	return -g.Sums[0] / n, []float64{-1 / n}
}
