package engine

import (
	"fmt"
	"time"

	"perch/engine/gemma4"
	"perch/engine/kvcache"
	"perch/engine/sample"
	"perch/engine/tensor"
)

// decode samples token after token. On a lazy backend step n+1 is built
// from the still-unread token n and queued (async eval) before token n is
// read, so the host's work overlaps the device's.
// It returns the stop reason and how many generated tokens were fed to the
// caches (they then hold the prompt and generated[:fed]).
func (e *Engine) decode(j *job, caches []kvcache.Cache, logits tensor.Tensor, stats *Stats) (string, int, error) {
	b, text := e.b, e.model.Text
	sampler := sample.New(b, j.params, e.cfg.Text.VocabSize, e.suppressed(j.req))
	defer sampler.Release()
	out := e.newOutput(j)
	// A grammar masks each step from the token before it, so constrained
	// decoding reads every token before building the next step.
	cons := j.constraint
	pipeline := b.Lazy() && !j.params.UsesHistory() && cons == nil
	var allow []bool
	if cons != nil {
		allow = make([]bool, e.cfg.Text.VocabSize)
	}
	draw := func(l tensor.Tensor, history []int32) tensor.Tensor {
		if cons == nil {
			return sampler.Sample(l, history)
		}
		return sampler.SampleAllowed(l, history, allowMask(b, cons, allow))
	}

	fed := 0
	// step returns the next token and its logits' sum (checkFinite).
	step := func(y tensor.Tensor, history []int32) (tensor.Tensor, tensor.Tensor) {
		fed++
		l := text.Forward(gemma4.Inputs{IDs: b.Reshape(y, 1, 1)}, caches)
		return draw(l, history), logitSum(b, l)
	}
	var generated []int32
	var decodeStart time.Time
	var host time.Duration
	y, ySum := draw(logits, nil), logitSum(b, logits)
	if err := b.AsyncEval(y, ySum); err != nil {
		return "", 0, err
	}
	for n := 0; ; n++ {
		stepStart := time.Now()
		var next, nextSum tensor.Tensor
		var wait time.Duration // inside the backend's evaluation, not host work
		if pipeline && n+1 < j.maxTok {
			next, nextSum = step(y, nil)
			w := time.Now()
			if err := b.AsyncEval(append(kvcache.States(caches), next, nextSum)...); err != nil {
				return "", fed, err
			}
			wait += time.Since(w)
		}
		w := time.Now()
		ids, err := b.Int32s(y)
		if err == nil {
			err = checkFinite(b, ySum, fmt.Sprintf("at answer token %d", n))
		}
		wait += time.Since(w)
		if err != nil {
			return "", fed, fmt.Errorf("decode step %d: %w", n, err)
		}
		id := ids[0]
		if cons != nil {
			if err := cons.Advance(id); err != nil {
				return "", fed, fmt.Errorf("decode step %d: %w", n, err)
			}
		}
		generated = append(generated, id)
		if n == 0 {
			stats.TimeToFirst = time.Since(j.start)
			decodeStart = time.Now()
		}
		stop := !out.token(id) // a stop token or stop string ended the answer
		if err := j.ctx.Err(); err != nil {
			stats.finish(generated, decodeStart, host)
			return StopCancelled, fed, nil
		}
		if stop {
			stats.finish(generated, decodeStart, host)
			return out.stopReason(id), fed, nil
		}
		if cons != nil && cons.Finished() { // the grammar allows nothing more
			out.flush()
			stats.finish(generated, decodeStart, host)
			return out.stopReason(id), fed, nil
		}
		if n+1 >= j.maxTok {
			out.flush()
			stats.finish(generated, decodeStart, host)
			return StopMaxTokens, fed, nil
		}
		if next == nil {
			next, nextSum = step(y, generated)
		}
		b.Sweep(next, nextSum)
		host += time.Since(stepStart) - wait
		y, ySum = next, nextSum
	}
}

// finish fills the token and speed statistics.
func (s *Stats) finish(generated []int32, decodeStart time.Time, host time.Duration) {
	s.GeneratedTokens = len(generated)
	s.TokenIDs = generated
	if len(generated) > 1 && !decodeStart.IsZero() {
		s.DecodeTokS = float64(len(generated)-1) / time.Since(decodeStart).Seconds()
	}
	if steps := len(generated) - 1; steps > 0 {
		s.HostPerStep = host / time.Duration(steps)
	}
}
