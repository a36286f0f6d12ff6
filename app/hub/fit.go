package hub

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"

	"perch/engine/gemma4"
)

// DefaultContext is the context length the fit check assumes when none is
// given (what LM Studio and Ollama users get by default, doubled).
const DefaultContext = 8192

// runtimeOverhead covers the process around the model: the GUI with the
// tiny fixture model peaks at about 240 MB resident (the CLI at 45 MB).
// BenchmarkFitVsPeak checks the whole estimate against real runs.
const runtimeOverhead = 256 << 20

// ErrDoesNotFit is wrapped by *FitError.
var ErrDoesNotFit = errors.New("model does not fit in memory")

// Budget is the memory this machine can give a model.
type Budget struct {
	TotalRAM int64
	Usable   int64  // what the estimate must stay under
	Source   string // how Usable was found, for the breakdown
}

// Estimate is a memory breakdown for one model at one context length on
// one backend, computed from the checkpoint's gemma4.Description (the
// engine sizes its caches from the same description).
type Estimate struct {
	Backend      string // "go" or "mlx"
	Context      int    // tokens
	TextWeights  int64  // resident bytes of the language model
	TowerWeights int64  // vision/audio encoders (0 when unknown: then inside TextWeights)
	KVCache      int64  // as the engine allocates it at Context
	Working      int64  // peak transient: a prefill chunk, a tower pass, a cache growing
	Slack        int64  // the Go collector's headroom over the transient part
	Overhead     int64
	Total        int64
	Budget       Budget
	Fits         bool
	MaxContext   int // largest context (multiple of 256) that fits; 0 when none
	ModelContext int // the model's max_position_embeddings
	KVPerToken   int64
	Notes        []string

	desc *gemma4.Description
	rt   gemma4.Runtime
}

// defaultBackend is the backend "auto" picks where nothing says otherwise:
// MLX on a Mac, the Go backend elsewhere.
func defaultBackend() string {
	if runtime.GOOS == "darwin" {
		return gemma4.BackendMLX
	}
	return gemma4.BackendGo
}

// EstimateMemory estimates what d needs on backend ("": the platform's
// default) at contextLen (0: DefaultContext, capped at the model's
// maximum) and compares it with b.
func EstimateMemory(d *gemma4.Description, backend string, contextLen int, b Budget) *Estimate {
	if backend == "" {
		backend = defaultBackend()
	}
	if contextLen <= 0 {
		contextLen = DefaultContext
	}
	e := &Estimate{Budget: b, ModelContext: d.ContextLength(), Overhead: runtimeOverhead, desc: d, rt: d.Runtime(backend)}
	e.Backend = e.rt.Backend
	if contextLen > e.ModelContext {
		e.Notes = append(e.Notes, fmt.Sprintf("context %d is over the model's %d; using %d", contextLen, e.ModelContext, e.ModelContext))
		contextLen = e.ModelContext
	}
	if !d.Weights.Exact {
		e.Notes = append(e.Notes, "weight sizes from the download listing: the tower split and what the Go backend copies at load are known once downloaded")
	}
	if len(d.Cfg.Unrecognized) > 0 {
		e.Notes = append(e.Notes, "config keys Perch does not know (ignored): "+strings.Join(d.Cfg.Unrecognized, ", "))
	}
	e.KVPerToken = d.Cfg.Text.KVPerToken(e.rt.KVElem)
	e.at(contextLen)
	e.Fits = e.Total <= b.Usable
	// The total grows with the context, so bisect for the largest that fits.
	lo, hi := 0, e.ModelContext/256
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if e.with(mid*256) <= b.Usable {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	e.MaxContext = lo * 256
	return e
}

// at fills the breakdown for ctx tokens.
func (e *Estimate) at(ctx int) {
	m := e.desc.Memory(e.rt, ctx, gemma4.DefaultWindowSlack)
	w := e.desc.Weights
	e.Context = ctx
	e.TowerWeights = w.Towers()
	e.TextWeights = m.Weights - e.TowerWeights
	e.KVCache, e.Working, e.Slack = m.KV, m.Working, m.Slack
	e.Total = sat(float64(m.Total()) + float64(e.Overhead))
}

// with is the total at another context length.
func (e *Estimate) with(ctx int) int64 {
	c := *e
	c.at(ctx)
	return c.Total
}

// sat converts to int64, saturating instead of overflowing.
func sat(f float64) int64 {
	if f >= math.MaxInt64 || math.IsNaN(f) {
		return math.MaxInt64
	}
	return int64(f)
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
		smaller = SuggestSmaller(est.desc.Weights.Total(), est.Context, est.Budget)
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
	d := e.desc
	fmt.Fprintf(&b, "  %s (%s, %s) on the %s backend\n", d.Name(), d.Kind(), d.Quantization(), backendName(e.Backend))
	if e.TowerWeights > 0 {
		row("text weights", e.TextWeights, residency(e.rt))
		row("tower weights", e.TowerWeights, "vision/audio encoders")
	} else {
		row("weights", e.TextWeights, "all safetensors files")
	}
	row("KV cache", e.KVCache, fmt.Sprintf("%d tokens, %s/token past the sliding window", e.Context, FormatBytes(e.KVPerToken)))
	row("working set", e.Working, fmt.Sprintf("peak of a %d-token prefill chunk or a tower pass", min(e.Context, e.rt.PrefillChunk)))
	if e.Slack > 0 {
		row("collector headroom", e.Slack, "Go's GC lets the heap grow to twice what is live")
	}
	row("runtime", e.Overhead, "process, tokenizer, app")
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

func residency(rt gemma4.Runtime) string {
	if rt.Mapped {
		return "mapped from the files (per-layer embedding rows read as used)"
	}
	return "loaded whole"
}

func backendName(b string) string {
	if b == gemma4.BackendMLX {
		return "MLX"
	}
	return "Go"
}

// KVBudget is what the KV cache may take on this machine besides
// everything else the estimate counts (at one prefill chunk of context):
// the engine's Options.MaxKVBytes. On the Go backend the cache also
// counts in the collector's headroom.
func (e *Estimate) KVBudget() int64 {
	c := *e
	c.at(max(1, c.rt.PrefillChunk))
	rest := c.Total - c.KVCache
	factor := int64(1)
	if c.rt.GCSlack {
		rest -= c.KVCache // Slack includes the cache once more
		factor = 2
	}
	return (c.Budget.Usable - rest) / factor
}
