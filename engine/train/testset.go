package train

import (
	"context"
	"fmt"
)

// TestLoss evaluates rows (a folder's test.jsonl) at the trainer's current
// adapter in batches of size, at most n batches (-1: all), each weighted as
// a validation's are (by counted tokens; by rows for preference methods).
// It returns the loss and the counted tokens.
func TestLoss(ctx context.Context, tr *Trainer, rows []Row, size, n int) (float64, int, error) {
	if len(rows) == 0 || size < 1 {
		return 0, 0, fmt.Errorf("test: no rows")
	}
	var sum, weight float64
	tokens := 0
	for i, b := range evalBatches(rows, size, n) {
		if err := ctx.Err(); err != nil {
			return 0, 0, err
		}
		b, err := withMedia(ctx, b)
		if err != nil {
			return 0, 0, err
		}
		m, err := tr.Evaluate(b)
		if err != nil {
			return 0, 0, fmt.Errorf("test batch %d: %w", i+1, err)
		}
		w := float64(m.Tokens)
		if tr.opts.Method.Rows() != RowsSFT {
			w = float64(len(b))
		}
		sum += m.Loss * w
		weight += w
		tokens += m.Tokens
	}
	return sum / weight, tokens, nil
}
