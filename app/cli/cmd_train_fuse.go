package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"perch/app/engines"
	"perch/engine/lora"
)

// runTrainFuse is perch train fuse: a new model folder with an adapter
// merged into its weights (lora.FuseDir).
func runTrainFuse(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("train fuse", flag.ContinueOnError)
	fs.SetOutput(stderr)
	model := fs.String("model", "", "base model folder or Hugging Face repo (REPO[@REV]) in the local cache")
	adapter := fs.String("adapter", "", "adapter folder (Perch's or mlx-lm's)")
	out := fs.String("out", "", "new model folder to write (must not exist)")
	dense := fs.Bool("dequantize", false, "write fused quantized projections dense (exact, larger) instead of requantizing them")
	words, err := parseFlags(fs, args)
	if err == flag.ErrHelp {
		return 0
	}
	if err == nil && (len(words) > 0 || *adapter == "" || *out == "") {
		err = errors.New("usage: perch train fuse --adapter DIR --out DIR [--model M] [--dequantize]")
	}
	if err != nil {
		fmt.Fprintln(stderr, "perch train fuse:", err)
		return 2
	}
	dir, err := engines.Resolve(*model)
	if err == nil {
		var ad *lora.Adapter
		if ad, err = lora.Load(*adapter); err == nil {
			var n int
			if n, err = lora.FuseDir(dir, *out, ad, lora.FuseOptions{Dequantize: *dense}); err == nil {
				fmt.Fprintf(stdout, "fused %d projections of %s into %s\n", n, *adapter, *out)
				return 0
			}
		}
	}
	fmt.Fprintln(stderr, "perch train fuse:", err)
	return 1
}
