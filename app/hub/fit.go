package hub

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// DefaultContext is the context length the fit check assumes when none is
// given (what LM Studio and Ollama users get by default, doubled).
const DefaultContext = 8192

// prefillChunk is the prefill step size (mlx-vlm's prefill_step_size).
const prefillChunk = 2048

// runtimeOverhead covers the process, allocator slack and the tokenizer.
const runtimeOverhead = 512 << 20

// ErrDoesNotFit is wrapped by *FitError.
var ErrDoesNotFit = errors.New("model does not fit in memory")

// Weights are the bytes of a checkpoint's tensors.
type Weights struct {
	Text   int64 // everything when the split is unknown (remote listing sizes)
	Towers int64 // vision_tower.*, audio_tower.*, vision_embedder.*, embed_vision.*, embed_audio.*
}

// Budget is the memory this machine can give a model.
type Budget struct {
	TotalRAM int64
	Usable   int64  // what the estimate must stay under
	Source   string // how Usable was found, for the breakdown
}

// Estimate is a memory breakdown for one model at one context length.
type Estimate struct {
	Context      int   // tokens
	TextWeights  int64 // bytes
	TowerWeights int64 // 0 when unknown (then inside TextWeights)
	KVCache      int64 // at Context, donor layers only, sliding layers capped at the window
	Working      int64 // peak transient: prefill chunk or a tower's encoder pass
	Overhead     int64
	Total        int64
	Budget       Budget
	Fits         bool
	MaxContext   int // largest context (multiple of 256) that fits; 0 when none
	ModelContext int // the model's max_position_embeddings
	KVPerToken   int64
	Notes        []string
}

// EstimateMemory estimates the memory a checkpoint needs at contextLen
// (0: DefaultContext, capped at the model's maximum) from its config.json
// and weight bytes, and compares it with b.
func EstimateMemory(config []byte, w Weights, contextLen int, b Budget) (*Estimate, error) {
	g, err := parseGeometry(config)
	if err != nil {
		return nil, err
	}
	if w.Text < 0 || w.Towers < 0 {
		return nil, fmt.Errorf("negative weight size")
	}
	if contextLen <= 0 {
		contextLen = DefaultContext
	}
	e := &Estimate{TextWeights: w.Text, TowerWeights: w.Towers, Budget: b, ModelContext: g.MaxContext, Overhead: runtimeOverhead}
	if contextLen > g.MaxContext {
		e.Notes = append(e.Notes, fmt.Sprintf("context %d is over the model's %d; using %d", contextLen, g.MaxContext, g.MaxContext))
		contextLen = g.MaxContext
	}
	if g.ActNote != "" {
		e.Notes = append(e.Notes, g.ActNote)
	}
	e.Context = contextLen
	full, _ := g.kvSplit()
	e.KVPerToken = int64(full)
	e.KVCache, e.Working = g.kvBytes(contextLen), g.working(contextLen)
	e.Total = e.total()
	e.Fits = e.Total <= b.Usable
	// The total grows with the context, so bisect for the largest that fits.
	lo, hi := 0, g.MaxContext/256
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if e.with(g, mid*256) <= b.Usable {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	e.MaxContext = lo * 256
	return e, nil
}

func (e *Estimate) total() int64 {
	return sat(float64(e.TextWeights) + float64(e.TowerWeights) + float64(e.KVCache) + float64(e.Working) + float64(e.Overhead))
}

// with is the total at another context length.
func (e *Estimate) with(g *geometry, ctx int) int64 {
	c := *e
	c.KVCache, c.Working = g.kvBytes(ctx), g.working(ctx)
	return c.total()
}

// sat converts to int64, saturating instead of overflowing.
func sat(f float64) int64 {
	if f >= math.MaxInt64 || math.IsNaN(f) {
		return math.MaxInt64
	}
	return int64(f)
}

// kvSplit is per-token K+V bytes of the full and the sliding donor layers:
// layers from NL − num_kv_shared_layers on reuse a donor's cache
// (gemma4.md §3.4, §8.3).
func (g *geometry) kvSplit() (full, sliding float64) {
	for i := 0; i < g.Layers-g.SharedKV; i++ {
		if g.Full[i] {
			full += 2 * float64(g.GlobalKVHeads*g.GlobalHeadDim*g.ActBytes)
		} else {
			sliding += 2 * float64(g.KVHeads*g.HeadDim*g.ActBytes)
		}
	}
	return full, sliding
}

// kvBytes: full caches grow in 256-token steps; rotating caches stop at the window.
func (g *geometry) kvBytes(ctx int) int64 {
	full, sliding := g.kvSplit()
	n := float64((ctx + 255) / 256 * 256)
	return sat(full*n + sliding*float64(min(n, float64(g.Window))))
}

// working is the peak transient memory: the larger of one prefill chunk
// through the decoder and one encoder pass of a tower.
func (g *geometry) working(ctx int) int64 {
	t := float64(min(ctx, prefillChunk))
	a := float64(g.ActBytes)
	inter := float64(g.Intermediate)
	if g.DoubleWideMLP {
		inter *= 2
	}
	hidden := 4 * t * float64(g.Hidden) * a // residual, norms, attention output
	mlp := 3 * t * inter * a                // gate, up, product
	proj := t * float64(g.Heads*g.GlobalHeadDim+2*g.GlobalKVHeads*g.GlobalHeadDim) * a
	// Scores in float32: head dims 256/512 take MLX's unfused SDPA path, which
	// materialises [heads, chunk, keys] (the term mlx-bun's fit missed).
	keys := float64(ctx)
	if !g.anyFull() {
		keys = math.Min(float64(ctx), float64(g.Window)+t)
	}
	scores := float64(g.Heads) * t * keys * 4
	ple := 2 * t * float64(g.Layers*g.PerLayerInput) * a
	logits := float64(g.Vocab) * 4
	_, sliding := g.kvSplit()
	rotating := sliding * t // a rotating cache holds window + chunk − 1 during prefill
	prefill := hidden + mlp + proj + scores + ple + logits + rotating

	peak := prefill
	for _, tw := range []*towerGeometry{g.Vision, g.Audio} {
		if tw == nil {
			continue
		}
		n := float64(tw.Tokens)
		enc := n*float64(4*tw.Hidden+3*tw.Intermediate)*4 + float64(tw.Heads)*n*n*4
		peak = math.Max(peak, enc)
	}
	return sat(peak)
}

func (g *geometry) anyFull() bool {
	for _, f := range g.Full {
		if f {
			return true
		}
	}
	return false
}

// FitError refuses a model that does not fit, with a smaller suggestion.
type FitError struct {
	Model    string
	Estimate *Estimate
	Smaller  string // a catalog model that fits, if any
}

func (e *FitError) Unwrap() error { return ErrDoesNotFit }

func (e *FitError) Error() string {
	est := e.Estimate
	var b strings.Builder
	fmt.Fprintf(&b, "%s does not fit in memory: it needs about %s at %d tokens of context, and this machine can give it %s (%s)",
		e.Model, FormatBytes(est.Total), est.Context, FormatBytes(est.Budget.Usable), est.Budget.Source)
	var tries []string
	if est.MaxContext >= 2048 && est.MaxContext < est.Context {
		tries = append(tries, fmt.Sprintf("a context of %d tokens (--context %d)", est.MaxContext, est.MaxContext))
	}
	smaller := e.Smaller
	if smaller == "" {
		smaller = SuggestSmaller(est.TextWeights+est.TowerWeights, est.Context, est.Budget)
	}
	if smaller != "" {
		tries = append(tries, "a smaller model: "+smaller)
	}
	if len(tries) > 0 {
		b.WriteString(". Try " + strings.Join(tries, ", or "))
	} else {
		b.WriteString(". Close other apps or use a machine with more memory")
	}
	return b.String()
}

// Breakdown is the multi-line table `perch models fit` prints.
func (e *Estimate) Breakdown() string {
	var b strings.Builder
	row := func(name string, n int64, note string) {
		fmt.Fprintf(&b, "  %-22s %10s  %s\n", name, FormatBytes(n), note)
	}
	if e.TowerWeights > 0 {
		row("text weights", e.TextWeights, "")
		row("tower weights", e.TowerWeights, "vision/audio encoders")
	} else {
		row("weights", e.TextWeights, "all safetensors files")
	}
	row("KV cache", e.KVCache, fmt.Sprintf("%d tokens, %s/token past the sliding window", e.Context, FormatBytes(e.KVPerToken)))
	row("working set", e.Working, fmt.Sprintf("peak of a %d-token prefill chunk or a tower pass", min(e.Context, prefillChunk)))
	row("runtime", e.Overhead, "process, allocator, tokenizer")
	row("total", e.Total, "")
	row("available", e.Budget.Usable, e.Budget.Source)
	verdict := "fits"
	if !e.Fits {
		verdict = "does NOT fit"
	}
	fmt.Fprintf(&b, "  → %s; largest context that fits: %d tokens (model maximum %d)\n", verdict, e.MaxContext, e.ModelContext)
	for _, n := range e.Notes {
		fmt.Fprintf(&b, "  note: %s\n", n)
	}
	return b.String()
}
