package train

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"perch/engine"
	"perch/engine/train"
)

// mlx-lm's and mlx-lm-lora's habits on perch train: their flag names, their
// YAML config (-c), --mask-prompt, gradient accumulation, --test,
// --grad-checkpoint, --fine-tune-type and --optimizer, --train-mode and
// --epochs. Where Perch differs on purpose the help says so.
type mlxFlags struct {
	config, fineTune, optimizer, trainMode string
	trainGiven, test, maskPrompt, gradCkpt bool
	testBatches, accum, report, epochs     int
	keys                                   []string // lora_parameters.keys (config only, as in mlx-lm)
}

const trainHabits = `
Perch learns only the answer: the prompt of a chat row is not in the loss (mlx-lm's --mask-prompt,
here on by default). To learn the whole sequence give --mask-prompt=false or {"text": ...} rows.
mlx-lm's names work as they do there (-c config.yaml, --max-seq-length, --steps-per-eval,
--steps-per-report, --num-layers, --resume-adapter-file, --grad-accumulation-steps, --test,
--test-batches), and mlx-lm-lora's --train-mode and --epochs. Perch differs on purpose: it trains
without --train (--test alone evaluates --adapter-path on test.jsonl, as mlx-lm does); per-layer
recompute (--grad-checkpoint) is on unless turned off; test.jsonl is read only with --test;
checkpoints go to checkpoints/step-N/ folders (adapter and config together), not mlx-lm's
0000100_adapters.safetensors files.
`

func addMLXFlags(fs *flag.FlagSet, f *trainFlags) *mlxFlags {
	x := &mlxFlags{}
	fs.StringVar(&x.config, "config", "", "a YAML file of mlx-lm's training options (flags given win)")
	fs.StringVar(&x.config, "c", "", "short for --config")
	fs.BoolVar(&x.trainGiven, "train", false, "accepted for mlx-lm's commands (Perch trains without it; see --test)")
	fs.BoolVar(&x.test, "test", false, "after training, report the loss on test.jsonl (with no --train: only that, for --adapter-path)")
	fs.IntVar(&x.testBatches, "test-batches", 500, "batches of the test set (-1: all of test.jsonl)")
	fs.BoolVar(&x.maskPrompt, "mask-prompt", true, "learn only the answer of chat rows (false: every token; mlx-lm's default is false)")
	fs.BoolVar(&x.gradCkpt, "grad-checkpoint", true, "recompute each layer in the backward pass instead of keeping every activation (less memory; mlx-lm's default is off)")
	fs.IntVar(&x.accum, "grad-accumulation-steps", 1, "average the gradients of this many batches per optimizer step")
	fs.IntVar(&x.report, "steps-per-report", 10, "print a step line every N steps (without a terminal; --json prints every step)")
	fs.IntVar(&x.epochs, "epochs", 0, "train this many passes over train.jsonl instead of --iters (mlx-lm-lora's)")
	fs.StringVar(&x.fineTune, "fine-tune-type", "lora", "lora (dora and full are refused: Perch trains and serves LoRA adapters)")
	fs.StringVar(&x.optimizer, "optimizer", "adamw", "adamw, or adam (AdamW without weight decay, as MLX's Adam is); others are refused")
	fs.StringVar(&x.trainMode, "train-mode", "", "mlx-lm-lora's name for --method")
	// mlx-lm's names for Perch's flags: the same variables.
	fs.IntVar(&f.maxLen, "max-seq-length", f.maxLen, "mlx-lm's name for --max-seq-len")
	fs.IntVar(&f.valEvery, "steps-per-eval", f.valEvery, "mlx-lm's name for --val-every")
	fs.IntVar(&f.layers, "num-layers", f.layers, "mlx-lm's name for --lora-layers")
	fs.StringVar(&f.resume, "resume-adapter-file", "", "mlx-lm's name for --resume-adapter: an adapters.safetensors (its folder's adapter_config.json applies) or a folder")
	return x
}

// apply checks the mlx-lm settings and puts them into the request.
func (x *mlxFlags) apply(f *trainFlags, req *engine.TrainRequest) error {
	switch x.fineTune {
	case "lora":
	case "dora":
		return errors.New("--fine-tune-type dora: Perch trains and serves LoRA adapters only (DoRA's magnitude vectors are not applied by its engine); use lora")
	case "full":
		return errors.New("--fine-tune-type full: Perch trains LoRA adapters, not every weight; use lora")
	default:
		return fmt.Errorf("--fine-tune-type %q: use lora", x.fineTune)
	}
	switch x.optimizer {
	case "adamw":
	case "adam":
		if f.wd != 0 {
			return errors.New("--optimizer adam has no weight decay: use adamw for --weight-decay")
		}
	default:
		return fmt.Errorf("--optimizer %q: Perch trains with adamw (or adam, AdamW without weight decay)", x.optimizer)
	}
	if x.accum < 1 {
		return fmt.Errorf("--grad-accumulation-steps %d: at least 1", x.accum)
	}
	if x.report < 1 {
		return fmt.Errorf("--steps-per-report %d: at least 1", x.report)
	}
	if x.epochs < 0 {
		return fmt.Errorf("--epochs %d is negative", x.epochs)
	}
	if x.test && (x.testBatches == 0 || x.testBatches < -1) {
		return fmt.Errorf("--test-batches %d: a positive count, or -1 for all", x.testBatches)
	}
	// mlx-lm's batch is the micro-batch: a step reads accum of them.
	req.BatchSize *= x.accum
	req.Options.GradAccumulation = x.accum
	req.Options.NoRecompute = !x.gradCkpt
	req.WholeSequence = !x.maskPrompt
	req.Test, req.TestBatches, req.TestOnly = x.test, x.testBatches, x.test && !x.trainGiven
	req.Epochs = x.epochs
	if req.TestOnly {
		req.Resume = f.adapterPath
		if f.adapterPath == "" {
			req.Resume, req.AdapterDir = "", filepath.Join(os.TempDir(), "perch-test-only")
		}
	}
	if strings.HasSuffix(req.Resume, ".safetensors") {
		req.Resume = filepath.Dir(req.Resume)
	}
	if len(x.keys) > 0 {
		req.LoRA.LoRA.Keys = x.keys
	}
	return nil
}

// method is --train-mode or --method (one of them).
func (x *mlxFlags) method(f *trainFlags, fs *flag.FlagSet) (string, error) {
	given := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	mode := x.trainMode
	if mode == "normal" { // mlx-lm's training_mode
		mode = string(train.SFT)
	}
	if mode == "" {
		return f.method, nil
	}
	if given["method"] && f.method != mode {
		return "", fmt.Errorf("--method %s and --train-mode %s disagree: give one", f.method, x.trainMode)
	}
	return mode, nil
}
