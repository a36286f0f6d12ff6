package engine

import (
	"errors"
	"fmt"
	"math"

	"perch/engine/tensor"
)

// ErrNonFinite is wrapped by the error of a request whose logits had a NaN
// or an infinity: a checkpoint of corrupt (or wrongly described) weights
// then fails loudly instead of answering with empty text.
var ErrNonFinite = errors.New("the model produced NaN or infinite values")

// logitSum is the float32 sum of logits: NaN or ±Inf exactly when some
// logit is (softcapped logits are bounded, so finite ones cannot overflow).
// It is one more reduction over the vocabulary per step, read with the
// sampled token.
func logitSum(b tensor.Backend, logits tensor.Tensor) tensor.Tensor {
	return b.Sum(b.AsType(logits, tensor.Float32), -1, false)
}

// checkFinite reads a logitSum.
func checkFinite(b tensor.Backend, sum tensor.Tensor, where string) error {
	v, err := b.Float32s(sum)
	if err != nil {
		return err
	}
	for _, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("%w in its logits %s: the checkpoint's weights are likely corrupt or not what config.json describes", ErrNonFinite, where)
		}
	}
	return nil
}
