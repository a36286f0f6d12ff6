package train

import (
	"fmt"
	"math"
	"time"
)

// DefaultGradClip is the gradient clip both front ends start from (perch
// train's --grad-clip, the Teach page's runs): a step's global norm above
// it is scaled down, so one outlier batch cannot wreck a small adapter.
const DefaultGradClip = 1.0

// Options configure a Trainer.
type Options struct {
	Method Method
	// LearningRate is lora_a's; lora_b uses LearningRate * LoRAPlusRatio.
	LearningRate float64
	// LoRAPlusRatio is LoRA+'s B/A learning-rate ratio: 1 = plain LoRA;
	// refused unless finite and >= 1. 0 means 1.
	LoRAPlusRatio float64
	WeightDecay   float64 // AdamW's, decoupled (MLX's AdamW; no bias correction)
	GradClip      float64 // global L2 norm (MLX's clip_grad_norm); 0 = off
	Beta          float64 // the method's "beta" unless Params has one (0: the method's default)
	Lambda        float64 // the method's "lambda" unless Params has one (0: the method's default)
	// Params are the method's settings by name (Objective.Params: SimPO's
	// gamma, KTO's desirable_weight, …); absent ones take their defaults.
	Params   map[string]float64
	Schedule Schedule
	Seed     uint64 // dropout masks
	// GradAccumulation splits each Step's rows into this many micro-batches
	// and averages their gradients (mlx-lm's --grad-accumulation-steps;
	// 0 or 1: one batch).
	GradAccumulation int
	// heldBatch, in tests, replaces a BatchObjective's batch-level term:
	// finite differences of a loss whose batch term passes no gradient.
	heldBatch *float64
	// NoRecompute keeps every layer's activations on the tape instead of
	// recomputing one layer at a time in the backward pass.
	NoRecompute bool
}

// Schedule is the learning rate over optimizer updates, as mlx-lm's
// build_schedule composes MLX's schedulers: update k (0-based) uses
// linear warmup from WarmupInit over Warmup updates, then the decay.
type Schedule struct {
	Name       string  // "constant" (or "") or "cosine"
	Warmup     int     // warmup updates (0: none)
	WarmupInit float64 // learning rate at update 0 of the warmup
	DecaySteps int     // cosine: updates from the peak to End
	End        float64 // cosine: final learning rate
}

// LR is the learning rate of update k (0-based) for a peak rate base.
func (s Schedule) LR(base float64, k int) float64 {
	if s.Warmup > 0 {
		if k < s.Warmup+1 { // MLX's linear_schedule, joined at warmup+1
			return float64(min(k, s.Warmup))*((base-s.WarmupInit)/float64(s.Warmup)) + s.WarmupInit
		}
		k -= s.Warmup + 1
	}
	if s.Name == "cosine" {
		t := float64(min(k, s.DecaySteps))
		d := 0.5 * (1 + math.Cos(math.Pi/float64(s.DecaySteps)*t))
		return s.End + d*(base-s.End)
	}
	return base
}

func (s Schedule) validate() error {
	switch s.Name {
	case "", "constant":
	case "cosine":
		if s.DecaySteps < 1 {
			return fmt.Errorf("cosine schedule needs at least 1 decay step, got %d", s.DecaySteps)
		}
	default:
		return fmt.Errorf("unknown learning-rate schedule %q: use constant or cosine", s.Name)
	}
	if s.Warmup < 0 {
		return fmt.Errorf("warmup %d is negative", s.Warmup)
	}
	for _, v := range []float64{s.WarmupInit, s.End} {
		if !finite(v) || v < 0 {
			return fmt.Errorf("schedule learning rate %v is not a finite number >= 0", v)
		}
	}
	return nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// withDefaults fills the zero values and checks every field: LoRA+ is one
// policy for all methods, so a ratio that is not finite or is below 1 is
// refused here, before any step runs.
func (o Options) withDefaults() (Options, error) {
	if o.Method == "" {
		o.Method = SFT
	}
	obj, err := ObjectiveOf(o.Method)
	if err != nil {
		return o, err
	}
	declared := map[string]bool{}
	for _, p := range obj.Params() {
		declared[p.Name] = true
	}
	for name, v := range o.Params {
		if !declared[name] {
			return o, fmt.Errorf("%s has no setting %q", o.Method, name)
		}
		if !finite(v) || v < 0 {
			return o, fmt.Errorf("%s %s %v must be a finite number >= 0", o.Method, name, v)
		}
	}
	if o.GradAccumulation < 0 {
		return o, fmt.Errorf("gradient accumulation %d is negative", o.GradAccumulation)
	}
	if o.LoRAPlusRatio == 0 {
		o.LoRAPlusRatio = 1
	}
	if !finite(o.LoRAPlusRatio) || o.LoRAPlusRatio < 1 {
		return o, fmt.Errorf("LoRA+ ratio %v must be a finite number >= 1 (1 is plain LoRA)", o.LoRAPlusRatio)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"learning rate", o.LearningRate}, {"weight decay", o.WeightDecay}, {"gradient clip", o.GradClip}, {"beta", o.Beta}, {"lambda", o.Lambda}} {
		if !finite(f.v) || f.v < 0 {
			return o, fmt.Errorf("%s %v must be a finite number >= 0", f.name, f.v)
		}
	}
	return o, o.Schedule.validate()
}

// StepMetrics describe one step (or one evaluation).
type StepMetrics struct {
	// Loss and GradNorm (global L2 norm before clipping) at the parameters
	// the step starts from; GradNorm is 0 for Evaluate.
	Loss, GradNorm float64
	// Tokens counted: target tokens (SFT), response tokens of both
	// sequences (pairs), completion tokens (unpaired rows).
	Tokens int
	// Terms are the method's own metrics (Objective.Metrics), in order:
	// DPO's rewards, margin and accuracy, ORPO's log-odds, ….
	Terms []Term
	// LR is lora_a's learning rate of this update (lora_b's is LR * ratio).
	LR float64
	// PeakMemory is the backend's peak during the step (MLX: its allocator;
	// Go: the heap in use, sampled at every layer boundary).
	PeakMemory int64
	// TapeBytes is the most bytes of tensors the gradient tape and the
	// saved layer inputs held at once: the activation memory of the step.
	TapeBytes int64
	Elapsed   time.Duration
}
