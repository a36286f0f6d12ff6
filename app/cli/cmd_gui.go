package cli

import (
	"flag"
	"fmt"
	"os"

	"perch/app/desktop"
)

func init() {
	Register("gui", "start the Perch app (default)", runGUI)
}

func runGUI(args []string) int {
	var f desktop.Flags
	fs := flag.NewFlagSet("gui", flag.ContinueOnError)
	fs.BoolVar(&f.Hidden, "hidden", false, "start in the menubar or tray without opening the window (with no tray, the window opens)")
	fs.BoolVar(&f.QuickAsk, "quick-ask", false, "open the quick-ask popup once started")
	fs.IntVar(&f.Context, "context", 0, "cap the model's context at this many tokens (0: the model's own)")
	fs.StringVar(&f.DataDir, "data-dir", os.Getenv("PERCH_DATA_DIR"), "folder for chat history (default: the OS's app-data folder)")
	fs.StringVar(&f.Model, "model", os.Getenv("PERCH_MODEL"), "model folder or Hugging Face repo to use")
	fs.BoolVar(&f.ReadyProbe, "ready-probe", false, "print a line once the window is interactive (for benchmarks)")
	desktop.HarnessFlags(fs) // the screenshot build's -attach, -ask, -screenshots, ...
	seed := fs.Uint64("seed", 0, "sample every answer and seed every Teach run with this seed, so a scripted run is reproducible")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fs.Visit(func(fl *flag.Flag) {
		if fl.Name == "seed" {
			f.Seed = seed
		}
	})
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "perch: unexpected arguments %q\n", fs.Args())
		return 2
	}
	return desktop.Start(f)
}
