package teach

import (
	"errors"
	"fmt"
	"runtime"
	"time"

	"perch/app/hub"
	"perch/app/teach/dataset"
	"perch/app/teach/library"
	"perch/engine/gemma4"
	"perch/ui"
)

// Before a run starts: how much memory it needs here and about how long
// it takes. Memory is the inference estimate (app/hub's fit check) at the
// run's row length plus what training adds with per-layer recompute: the
// adapter with its gradient and AdamW moments, each layer's saved input,
// one layer's activations twice over (forward and backward), and the
// logits with their gradient.

// textGeometry is what the training terms read from the model's config.
type textGeometry struct {
	Hidden, Intermediate, Layers, Heads, KVHeads, HeadDim, Vocab int
}

func geometryOf(d *gemma4.Description) (textGeometry, error) {
	t := d.Cfg.Text
	g := textGeometry{Hidden: t.HiddenSize, Intermediate: t.IntermediateSize, Layers: t.NumHiddenLayers,
		Heads: t.NumAttentionHeads, KVHeads: t.NumKeyValueHeads, HeadDim: max(t.HeadDim, t.GlobalHeadDim), Vocab: t.VocabSize}
	if g.Hidden <= 0 || g.Layers <= 0 || g.Heads <= 0 || g.HeadDim <= 0 || g.Vocab <= 0 || g.Intermediate <= 0 {
		return g, errors.New("config.json lacks the text model's sizes")
	}
	if g.KVHeads <= 0 {
		g.KVHeads = g.Heads
	}
	return g, nil
}

// adapterParams counts the LoRA leaves of rank r on every projection.
func (g textGeometry) adapterParams(r int) float64 {
	h, q, kv, in := float64(g.Hidden), float64(g.Heads*g.HeadDim), float64(g.KVHeads*g.HeadDim), float64(g.Intermediate)
	perLayer := (h + q) + 2*(h+kv) + (q + h) + 2*(h+in) + (in + h)
	return float64(g.Layers) * float64(r) * perLayer
}

// params is the model's weight count (text decoder and its head).
func (g textGeometry) params() float64 {
	h, q, kv, in := float64(g.Hidden), float64(g.Heads*g.HeadDim), float64(g.KVHeads*g.HeadDim), float64(g.Intermediate)
	return float64(g.Layers)*(2*h*q+2*h*kv+3*h*in) + float64(g.Vocab)*h
}

// trainingBytes is what training adds at rows of t tokens.
func (g textGeometry) trainingBytes(rank, t int) float64 {
	T := float64(t)
	adapter := g.adapterParams(rank) * 4 * 4 // leaves, gradients, two AdamW moments
	saved := float64(g.Layers) * T * float64(g.Hidden) * 4
	layer := (4*T*float64(g.Hidden) + 3*T*float64(g.Intermediate) + float64(g.Heads)*T*T) * 4
	logits := 2 * T * float64(g.Vocab) * 4
	return adapter + saved + 2*layer + logits
}

// rowTokens guesses a row's length: ~3.5 characters a token, a photo's
// default budget of 280 soft tokens, a sound or video at 750.
func rowTokens(r dataset.Row) int {
	n, files := 8, r.Media() // a folder row's media files are no attachments: counted as photos
	for _, t := range r.Prompt {
		n += len(t.Text)*2/7 + 4
		files -= len(t.Media)
		for _, m := range t.Media {
			if m.Kind == "image" {
				n += 280
			} else {
				n += 750
			}
		}
	}
	n += files * 280
	return n + (len(r.Chosen)+len(r.Rejected))*2/7
}

// Estimate implements ui.Teacher.
func (s *Service) Estimate(p ui.TrainPlan) (ui.TrainEstimate, error) {
	var e ui.TrainEstimate
	if err := library.CheckName(p.Name); err != nil {
		return e, err
	}
	// A name in use is said now, not changed later behind the run's back.
	if free, err := s.UniqueName(p.Name, p.Base, ""); err != nil {
		return e, err
	} else if free != p.Name {
		return e, fmt.Errorf("you already have an adapter called %s for this model: choose another name, such as %s", p.Name, free)
	}
	if p.Steps < 1 || p.Rank < 1 || p.BatchSize < 1 || p.MaxSeqLen < 64 || !(p.LearningRate > 0) || !(p.LoRAPlusRatio >= 1) {
		return e, errors.New("steps, rank, batch size, maximum length, learning rate and LoRA+ ratio must all be set (the ratio at least 1)")
	}
	dir, name, err := s.locate(p.Base)
	if err != nil {
		return e, err
	}
	d, err := s.gather(p.Source, p.Method, p.ValShare)
	if err != nil {
		return e, err
	}
	e.Rows, e.ValRows = len(d.Train)+len(d.RawTrain), len(d.Valid)+len(d.RawVal)
	if e.Rows == 0 {
		return e, errors.New("nothing to train on for this method: see what the data gives above")
	}
	if e.Rows < p.BatchSize {
		return e, fmt.Errorf("the training set has %d rows, fewer than the batch size %d: lower the batch size under Advanced", e.Rows, p.BatchSize)
	}
	longest, total := 0, 0
	for _, r := range d.Train {
		n := rowTokens(r)
		longest, total = max(longest, n), total+n
	}
	for _, l := range d.RawTrain {
		n := len(l) * 2 / 7
		longest, total = max(longest, n), total+n
	}
	t := min(longest, p.MaxSeqLen)
	desc, err := gemma4.DescribeDir(dir)
	if err != nil {
		return e, fmt.Errorf("%s: %w", name, err)
	}
	g, err := geometryOf(desc)
	if err != nil {
		return e, err
	}
	b, err := s.o.Budget()
	if err != nil {
		return e, err
	}
	need := func(t int) (int64, error) {
		inf := hub.EstimateMemory(desc, "", max(t, 256), b)
		return inf.Total + int64(g.trainingBytes(p.Rank, t)), nil
	}
	if e.Memory, err = need(t); err != nil {
		return e, err
	}
	room := hub.Judge(e.Memory, b, b) // as the Models page judges
	e.Available, _ = hub.Capacity(b)
	e.Fits, e.Tight = room != hub.TooBig, room == hub.Tight
	if !e.Fits {
		e.Reason = s.refusal(name, t, e, b, need)
	}
	perRow := float64(total) / float64(max(len(d.Train)+len(d.RawTrain), 1))
	if p.Method != ui.MethodSFT {
		perRow *= 1.5 // two answers, and the reference pass without the adapter
	}
	tokens := float64(p.Steps*p.BatchSize) * min(perRow, float64(p.MaxSeqLen))
	rate, measured := s.measuredRate(p.Base)
	if !measured {
		rate = machineFLOPs() / (8 * g.params()) // forward, recompute, backward ≈ 4 forwards of 2 FLOP/param
		e.Basis = "A rough guess for this computer; the first run measures it."
	} else {
		e.Basis = "From the speed of your last run on this model."
	}
	e.Duration = time.Duration(tokens / rate * float64(time.Second))
	return e, nil
}

// refusal says why the run will not fit and what would.
func (s *Service) refusal(name string, t int, e ui.TrainEstimate, b hub.Budget, need func(int) (int64, error)) string {
	capacity, how := hub.Capacity(b)
	msg := fmt.Sprintf("Training %s on rows of up to %d tokens needs about %s, and this computer can give %s (%s).",
		name, t, ui.ByteSize(e.Memory), ui.ByteSize(capacity), how)
	for try := t / 2; try >= 256; try /= 2 {
		if n, err := need(try); err == nil && n <= capacity {
			return msg + fmt.Sprintf(" Try a maximum length of %d under Advanced (longer rows are cut).", try)
		}
	}
	return msg + " Choose a smaller base model."
}

// measuredRate is the tokens/s of the newest run on base that measured one.
func (s *Service) measuredRate(base string) (float64, bool) {
	runs, err := s.o.Store.Runs()
	if err != nil {
		return 0, false
	}
	for _, r := range runs {
		if r.Base == base && r.TokensPerSec > 0 {
			return r.TokensPerSec, true
		}
	}
	return 0, false
}

// machineFLOPs is a rough training throughput: the GPU through MLX on a
// Mac, the Go backend's kernels on every core elsewhere.
func machineFLOPs() float64 {
	if runtime.GOOS == "darwin" {
		return 2e12
	}
	return 1.5e10 * float64(runtime.NumCPU())
}
