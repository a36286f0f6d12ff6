package train

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"perch/app/cli"
	"perch/app/engines"
	"perch/engine"
	"perch/engine/lora"
	"perch/engine/train"
	"perch/engine/trainset"
)

func init() {
	cli.RegisterStreams("train", "fine-tune a LoRA adapter (sft, dpo, orpo); train watch DIR; train fuse", func(args []string, _ io.Reader, stdout, stderr io.Writer) int {
		return runTrain(args, stdout, stderr)
	})
}

const trainUsage = `usage: perch train --data DIR [flags]     fine-tune a LoRA adapter on DIR/train.jsonl (valid.jsonl)
       perch train watch DIR [--json]     follow a run's metrics stream (DIR/metrics.jsonl)
       perch train fuse --adapter DIR --out DIR [--model M] [--dequantize]
                                          write a model folder with the adapter merged
`

type trainFlags struct {
	model, backend, data, method, adapterPath, resume, schedule string
	cont                                                        string // --resume
	iters, batch, maxLen, rank, layers, valEvery, saveEvery     int
	valBatches, warmup                                          int
	lr, scale, dropout, ratio, wd, clip                         float64
	seed                                                        uint64
	noShuffle, jsonOut                                          bool
	params                                                      *methodParams
	mlx                                                         *mlxFlags
	decaySteps                                                  int     // cosine: from a config's lr_schedule (else iters − warmup)
	warmupInit, scheduleEnd                                     float64 // from a config's lr_schedule
	notes                                                       []string
}

func parseTrain(args []string, stderr io.Writer) (*trainFlags, error) {
	f := &trainFlags{}
	fs := newTrainFlagSet(f, stderr)
	words, err := cli.ParseFlags(fs, args)
	if err != nil {
		return nil, err
	}
	if f.mlx.config != "" {
		if f.notes, err = readConfig(f.mlx.config, fs, f.mlx, f); err != nil {
			return nil, err
		}
	}
	f.params.given(fs)
	if f.method, err = f.mlx.method(f, fs); err != nil {
		return nil, err
	}
	if len(words) > 0 {
		return nil, fmt.Errorf("unexpected %q (the dataset goes in --data)", words[0])
	}
	if f.data == "" {
		return nil, fmt.Errorf("no --data: give the folder with train.jsonl (see 'perch train -h')")
	}
	return f, nil
}

// request turns the flags into a training request.
func (f *trainFlags) request() (engine.TrainRequest, error) {
	method, err := train.ParseMethod(f.method)
	if err != nil {
		return engine.TrainRequest{}, err
	}
	params, err := f.params.forMethod(method)
	if err != nil {
		return engine.TrainRequest{}, err
	}
	cfg := lora.DefaultConfig()
	cfg.NumLayers, cfg.LoRA.Rank, cfg.LoRA.Scale, cfg.LoRA.Dropout = f.layers, f.rank, f.scale, f.dropout
	opts := train.Options{Method: method, LearningRate: f.lr, LoRAPlusRatio: f.ratio, WeightDecay: f.wd,
		GradClip: f.clip, Params: params, Seed: f.seed,
		Schedule: train.Schedule{Name: f.schedule, Warmup: f.warmup, WarmupInit: f.warmupInit, End: f.scheduleEnd}}
	if f.schedule == "cosine" {
		opts.Schedule.DecaySteps = max(f.iters-f.warmup, 1)
		if f.decaySteps > 0 {
			opts.Schedule.DecaySteps = f.decaySteps
		}
	}
	req := engine.TrainRequest{Data: f.data, MaxLen: f.maxLen, Options: opts, LoRA: cfg, Resume: f.resume,
		Iters: f.iters, BatchSize: f.batch, ValEvery: f.valEvery, ValBatches: f.valBatches, SaveEvery: f.saveEvery,
		NoShuffle: f.noShuffle, AdapterDir: f.adapterPath, Continue: f.cont}
	return req, f.mlx.apply(f, &req)
}

func runTrain(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "watch":
			return runTrainWatch(args[1:], stdout, stderr)
		case "fuse":
			return runTrainFuse(args[1:], stdout, stderr)
		}
	}
	f, err := parseTrain(args, stderr)
	if err == flag.ErrHelp {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "perch train:", err)
		return 2
	}
	out := newTrainPrinter(stdout, stderr, f.jsonOut)
	out.every = f.mlx.report
	for _, n := range f.notes {
		fmt.Fprintln(stderr, "perch train: note:", n)
	}
	req, err := f.request()
	if err != nil {
		return out.fail(err)
	}
	dir, err := engines.Resolve(f.model)
	if err != nil {
		return out.fail(err)
	}
	e, err := engines.Open(dir, engines.Settings{Backend: f.backend})
	if err != nil {
		return out.fail(err)
	}
	defer e.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP) // timeout, schedulers and closed terminals stop a run as Ctrl-C does
	defer stop()
	run, err := e.Train(ctx, req)
	if err != nil {
		return out.fail(err)
	}
	code := 0
	for ev := range run.Events() {
		out.event(ev, req.Options.Method)
		if ev.Kind == train.EventError {
			code = 1
		}
	}
	return code
}

// newTrainFlagSet is perch train's flags, writing into f.
func newTrainFlagSet(f *trainFlags, stderr io.Writer) *flag.FlagSet {
	def := lora.DefaultConfig()
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, trainUsage, trainHabits); fs.PrintDefaults() }
	fs.StringVar(&f.model, "model", "", "model folder or Hugging Face repo (REPO[@REV]) in the local cache")
	fs.StringVar(&f.backend, "backend", engine.BackendAuto, "auto, mlx or go")
	fs.StringVar(&f.data, "data", "", "dataset folder: train.jsonl, optional valid.jsonl")
	fs.StringVar(&f.method, "method", "sft", strings.Join(train.MethodNames(), ", "))
	fs.IntVar(&f.iters, "iters", 1000, "optimizer steps")
	fs.IntVar(&f.batch, "batch-size", 4, "rows per step")
	fs.IntVar(&f.maxLen, "max-seq-len", trainset.DefaultMaxLen, "rows longer than this many tokens are cut")
	fs.Float64Var(&f.lr, "learning-rate", 1e-5, "AdamW learning rate (of lora_a; lora_b's is this times --lora-plus-ratio)")
	fs.IntVar(&f.rank, "lora-rank", def.LoRA.Rank, "adapter rank")
	fs.Float64Var(&f.scale, "lora-scale", def.LoRA.Scale, "adapter scale (mlx-lm's, used as is)")
	fs.Float64Var(&f.dropout, "lora-dropout", 0, "dropout on the adapter's input")
	fs.IntVar(&f.layers, "lora-layers", def.NumLayers, "adapt the last N layers (<= 0: all)")
	fs.Float64Var(&f.ratio, "lora-plus-ratio", 1, "LoRA+: lora_b learns this many times faster than lora_a (1: plain LoRA)")
	f.params = addMethodParams(fs)
	fs.IntVar(&f.valEvery, "val-every", 200, "validate every N steps (0: only at checkpoints and the end)")
	fs.IntVar(&f.valBatches, "val-batches", train.DefaultValBatches, "batches per validation (-1: all of valid.jsonl)")
	fs.IntVar(&f.saveEvery, "save-every", 100, "save a checkpoint every N steps (0: none)")
	fs.StringVar(&f.adapterPath, "adapter-path", "adapters", "folder for the adapter, checkpoints/ and metrics")
	fs.Uint64Var(&f.seed, "seed", 0, "seed of the shuffle and of dropout")
	fs.Float64Var(&f.wd, "weight-decay", 0, "AdamW weight decay (decoupled)")
	fs.Float64Var(&f.clip, "grad-clip", train.DefaultGradClip, "clip the global gradient norm to this (0: off)")
	fs.StringVar(&f.schedule, "lr-schedule", "constant", "constant or cosine (decays over --iters)")
	fs.IntVar(&f.warmup, "warmup", 0, "linear learning-rate warmup over N steps")
	fs.StringVar(&f.resume, "resume-adapter", "", "start from this adapter folder (Perch's or mlx-lm's; its own rank, scale and keys apply)")
	fs.StringVar(&f.cont, "resume", "", "continue the run saved in this adapter folder (or one of its checkpoints) where it stopped, with the same flags: it ends bit for bit as if never stopped")
	fs.BoolVar(&f.noShuffle, "no-shuffle", false, "keep the file's row order and batches")
	fs.BoolVar(&f.jsonOut, "json", false, "print the metrics stream's JSON lines (tokens: those the loss counts, the answer's or both responses', as mlx-lm counts them; tokens_per_s: those per second)")
	f.mlx = addMLXFlags(fs, f)
	return fs
}
