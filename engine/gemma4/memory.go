package gemma4

import (
	"fmt"
	"math"

	"perch/engine/tensor"
)

// DefaultWindowSlack is how many slots sliding-window caches keep beyond
// the window by default (Text.WindowSlack; the engine's Options default).
const DefaultWindowSlack = 1024

// Backends a Runtime describes (the engine's backend names).
const (
	BackendGo  = "go"
	BackendMLX = "mlx"
)

// Runtime is how one backend holds a model: the engine sizes its caches
// and prefill with it, and the fit check sizes its estimate with it.
type Runtime struct {
	Backend      string
	KVElem       int // bytes per cached key/value element
	ActElem      int // bytes per activation element
	PrefillChunk int // prompt tokens per prefill step
	// Mapped: weights stay in the mapped checkpoint file (the Go backend
	// aliases U32/BF16/F16 tensors), so rows of the per-layer embedding
	// table no token asks for are never read into memory. MLX loads every
	// weight.
	Mapped bool
	// GCSlack: transient memory is garbage-collected, and Go's collector
	// lets the heap grow to twice what survived the last cycle (GOGC=100).
	GCSlack bool
}

// RuntimeFor is the runtime of backend ("go", "go-plain" or "mlx") for a
// model whose activations come out of its embeddings in act.
func RuntimeFor(backend string, act tensor.DType) Runtime {
	if backend == BackendMLX {
		elem := 4
		if act != tensor.Float32 {
			elem = 2
		}
		return Runtime{Backend: BackendMLX, KVElem: elem, ActElem: elem, PrefillChunk: 2048}
	}
	return Runtime{Backend: BackendGo, KVElem: 4, ActElem: 4, PrefillChunk: 512, Mapped: true, GCSlack: true}
}

// Runtime is backend's runtime for this checkpoint (the Go backend computes
// in float32; MLX in the checkpoint's float dtype).
func (d *Description) Runtime(backend string) Runtime {
	return RuntimeFor(backend, d.Weights.Float)
}

// Memory is what a backend holds for one conversation of a given length.
type Memory struct {
	Weights int64 // resident weight bytes
	KV      int64 // KV caches as allocated
	Working int64 // peak transient: a prefill chunk, a tower pass, a cache growing
	Slack   int64 // allocator/collector headroom over the transient part
}

// Total is the sum of the parts.
func (m Memory) Total() int64 { return m.Weights + m.KV + m.Working + m.Slack }

// Memory estimates rt's footprint with tokens of context and sliding
// caches of window+slack slots.
func (d *Description) Memory(rt Runtime, tokens, slack int) Memory {
	t := &d.Cfg.Text
	w := d.Weights.Total()
	if rt.Mapped {
		// Mapped tensors are resident as far as they are read: all of them
		// but the per-layer embedding table's rows no token asks for. A
		// copied tensor is resident twice: its copy, and the file pages the
		// copy read (clean, so the system may drop them under pressure).
		w += d.Weights.Copied
		if !d.Weights.LookupCopied && d.Weights.LookupRows > 0 {
			row := d.Weights.Lookup / int64(d.Weights.LookupRows)
			touched := int64(min(tokens, d.Weights.LookupRows)) * (row + pageBytes)
			w += min(touched, d.Weights.Lookup) - d.Weights.Lookup
		}
	}
	m := Memory{Weights: w, KV: t.KVBytes(tokens, rt.KVElem, slack)}
	m.Working = d.working(rt, tokens, slack)
	if rt.GCSlack {
		m.Slack = m.KV + m.Working
	}
	return m
}

// pageBytes is the granularity a mapped row is read in.
const pageBytes = 4096

// working is the largest transient: one prefill chunk through a decoder
// layer (plus the per-layer inputs of the whole chunk, and a full cache
// being grown, when the old and new buffers coexist), or one tower pass.
func (d *Description) working(rt Runtime, tokens, slack int) int64 {
	t := &d.Cfg.Text
	L := float64(min(tokens, rt.PrefillChunk))
	act := float64(rt.ActElem)
	var hd, kvh, inter float64
	for i := range t.LayerTypes {
		hd = math.Max(hd, float64(t.HeadDimOf(i)))
		kvh = math.Max(kvh, float64(t.KVHeadsOf(i)*t.HeadDimOf(i)))
		inter = math.Max(inter, float64(t.MLPWidth(i)))
	}
	H, nH := float64(t.HiddenSize), float64(t.NumAttentionHeads)
	// residual, norms, attention and MLP outputs; gate, up, activation and
	// product; q, its norm and rotation, the attention output; k and v.
	layer := L * (8*H + 4*inter + 3*nH*hd + 4*kvh) * act
	if t.EnableMoEBlock {
		layer += L * float64(t.TopKExperts) * (3*float64(t.MoEIntermediateSize) + H) * act
	}
	ple := 3 * L * float64(t.NumHiddenLayers*t.HiddenSizePerLayerInput) * act
	logits := 3 * float64(t.VocabSize) * 4
	if rt.Backend == BackendMLX && hd > 256 {
		// MLX's SDPA has no fused kernel for head dims over 256: the float32
		// scores [heads, chunk, keys] are materialised.
		layer += nH * L * float64(tokens) * 4
	}
	full, _ := t.kvSplit(rt.KVElem)
	grow := full * float64(roundUp(tokens, kvStep))
	peak := layer + ple + logits + grow
	if v := d.Cfg.Vision; v != nil {
		peak = math.Max(peak, visionPass(v))
	}
	if a := d.Cfg.Audio; a != nil && !a.Unified() {
		peak = math.Max(peak, conformerPass(a))
	}
	return sat(peak)
}

// visionPass is the float32 working set of one image at the default
// budget: patches × (residual, norms, q/k/v/o, MLP) per layer, or the
// encoder-free embedder's patch rows.
func visionPass(v *VisionConfig) float64 {
	if v.Unified() {
		n := float64(v.DefaultSoftTokens())
		pd := float64(3 * v.ModelPatchSize * v.ModelPatchSize)
		return n * (3*pd + 6*float64(v.MMEmbedDim)) * 4
	}
	n := float64(v.DefaultSoftTokens() * v.PoolingKernelSize * v.PoolingKernelSize)
	D := float64(v.HiddenSize)
	return n * (8*D + 4*float64(v.IntermediateSize) + 3*float64(v.PatchSize*v.PatchSize)) * 4
}

// conformerPass is the float32 working set of a 30-second clip: the first
// subsampling convolution's output dominates.
func conformerPass(a *AudioConfig) float64 {
	const frames = 3000 // 30 s at 10 ms
	ch := a.SubsamplingConvChannels
	sub := frames / 2 * (melBins / 2) * float64(ch[0]) * 2
	layer := frames / 4 * float64(a.HiddenSize) * 12
	return (sub + layer) * 4
}

// kvStep is the full caches' growth step (kvcache.Full).
const kvStep = 256

func roundUp(n, step int) int { return (n + step - 1) / step * step }

// kvSplit is K+V bytes per token of the full and the sliding donor layers.
func (t *TextConfig) kvSplit(elem int) (full, sliding float64) {
	for i := range t.LayerTypes {
		if t.KVDonor(i) != i {
			continue
		}
		n := 2 * float64(t.KVHeadsOf(i)*t.HeadDimOf(i)*elem)
		if t.IsFull(i) {
			full += n
		} else {
			sliding += n
		}
	}
	return full, sliding
}

// KVPerToken is the growth of the KV caches per token past the sliding
// window: the full donor layers' keys and values.
func (t *TextConfig) KVPerToken(elem int) int64 {
	full, _ := t.kvSplit(elem)
	return int64(full)
}

// KVBytes is the KV caches' size as allocated for a sequence of tokens:
// keys and values of the donor layers only (KV-shared layers reuse them);
// full caches grow in steps of kvStep, sliding caches hold window + slack
// slots from their first token; elem is the bytes per value.
func (t *TextConfig) KVBytes(tokens, elem, slack int) int64 {
	full, sliding := t.kvSplit(elem)
	if tokens <= 0 {
		return 0
	}
	return sat(full*float64(roundUp(tokens, kvStep)) + sliding*float64(t.SlidingWindow+max(slack, 0)))
}

// sat converts to int64, saturating instead of overflowing.
func sat(f float64) int64 {
	if f >= math.MaxInt64 || math.IsNaN(f) {
		return math.MaxInt64
	}
	return int64(f)
}

// String is a one-line summary, for logs.
func (m Memory) String() string {
	return fmt.Sprintf("weights %d, KV %d, working %d, slack %d", m.Weights, m.KV, m.Working, m.Slack)
}
