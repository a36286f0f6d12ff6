package train

// stepGrads is run with gradients over GradAccumulation micro-batches of
// rows (consecutive, sizes differing by at most one): the gradient, the
// loss and the method's metrics are their means, as mlx-lm's
// --grad-accumulation-steps averages its micro-batches' gradients.
func (t *Trainer) stepGrads(rows []Row) (StepMetrics, [][]float32, error) {
	n := min(max(t.opts.GradAccumulation, 1), len(rows))
	if n <= 1 {
		return t.run(rows, true)
	}
	var m StepMetrics
	var sum [][]float32
	for k := 0; k < n; k++ {
		part := rows[k*len(rows)/n : (k+1)*len(rows)/n]
		mk, g, err := t.run(part, true)
		if err != nil {
			return mk, nil, err
		}
		if sum == nil {
			sum, m.Terms = g, mk.Terms
			for i := range m.Terms {
				m.Terms[i].Value = 0
			}
		} else {
			for i := range g {
				for j, v := range g[i] {
					sum[i][j] += v
				}
			}
		}
		m.Loss += mk.Loss / float64(n)
		for i := range mk.Terms {
			m.Terms[i].Value += mk.Terms[i].Value / float64(n)
		}
		m.Tokens += mk.Tokens
		m.TapeBytes = max(m.TapeBytes, mk.TapeBytes)
	}
	for i := range sum {
		for j := range sum[i] {
			sum[i][j] /= float32(n)
		}
	}
	return m, sum, nil
}
