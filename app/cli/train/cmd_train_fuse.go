package train

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"perch/app/cli"
	"perch/app/engines"
	"perch/engine"
	"perch/engine/lora"
)

// runTrainFuse is perch train fuse: a new model folder with an adapter
// merged into its weights (lora.FuseDir).
func runTrainFuse(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("train fuse", flag.ContinueOnError)
	fs.SetOutput(stderr)
	model := fs.String("model", "", "base model folder or Hugging Face repo (REPO[@REV]) in the local cache")
	adapter := fs.String("adapter", "adapters", "adapter folder (Perch's or mlx-lm's)")
	out := fs.String("out", "fused_model", "new model folder to write (must not exist)")
	backend := fs.String("backend", engine.BackendAuto, "auto, mlx or go (runs the probe prompt)")
	dense := fs.Bool("dequantize", false, "write fused quantized projections dense (exact, larger) instead of requantizing them")
	// mlx_lm.fuse's names (its defaults too: adapters, fused_model).
	fs.StringVar(adapter, "adapter-path", "adapters", "mlx_lm.fuse's name for --adapter")
	fs.StringVar(out, "save-path", "fused_model", "mlx_lm.fuse's name for --out")
	fs.BoolVar(dense, "de-quantize", false, "mlx_lm.fuse's name for --dequantize")
	words, err := cli.ParseFlags(fs, args)
	if err == flag.ErrHelp {
		return 0
	}
	if err == nil && (len(words) > 0 || *adapter == "" || *out == "") {
		err = errors.New("usage: perch train fuse [--adapter DIR] [--out DIR] [--model M] [--dequantize] (defaults: adapters, fused_model)")
	}
	if err != nil {
		fmt.Fprintln(stderr, "perch train fuse:", err)
		return 2
	}
	dir, err := engines.Resolve(*model)
	if err == nil {
		var rep *engine.FuseReport
		if rep, err = fuseModel(dir, *adapter, *out, *dense, *backend); err == nil {
			fmt.Fprintf(stdout, "fused %d projections of %s into %s\n", rep.Projections, *adapter, *out)
			if rep.Probed {
				fmt.Fprintf(stdout, "requantized: on a probe prompt the logits moved by up to %.4g from the adapter on the base model; ", rep.MaxLogitDiff)
				if rep.SameAnswer() {
					fmt.Fprintf(stdout, "the greedy answer is the same\n")
				} else {
					fmt.Fprintf(stdout, "the greedy answer changed (%d tokens): fuse again with --dequantize to keep the adapter exact\n", probeLen(rep))
				}
			}
			return 0
		}
	}
	fmt.Fprintln(stderr, "perch train fuse:", err)
	return 1
}

// fuseModel opens the base model and fuses the adapter into a new folder.
func fuseModel(dir, adapter, out string, dense bool, backend string) (*engine.FuseReport, error) {
	e, err := engine.Open(dir, engine.Options{Backend: backend})
	if err != nil {
		return nil, err
	}
	defer e.Close()
	return e.Fuse(context.Background(), adapter, out, lora.FuseOptions{Dequantize: dense})
}

func probeLen(r *engine.FuseReport) int { return len(r.Tokens[0]) }
