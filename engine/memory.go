package engine

import "fmt"

// checkKV refuses a request whose KV cache would not fit the budget,
// before any native work starts.
func (e *Engine) checkKV(tokens int) error {
	if e.opts.MaxKVBytes <= 0 {
		return nil
	}
	need := e.cfg.Text.KVBytes(tokens, e.rt.KVElem, e.opts.WindowSlack)
	if need <= e.opts.MaxKVBytes {
		return nil
	}
	fit := tokens
	for fit > 0 && e.cfg.Text.KVBytes(fit, e.rt.KVElem, e.opts.WindowSlack) > e.opts.MaxKVBytes {
		fit = fit * 9 / 10
	}
	return fmt.Errorf("this conversation needs %s of KV cache for %d tokens but %s is available: start a new conversation, attach less, or lower max tokens (about %d tokens fit)",
		gib(need), tokens, gib(e.opts.MaxKVBytes), fit)
}

func gib(n int64) string { return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30)) }
