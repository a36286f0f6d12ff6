package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"
)

func init() {
	register("gui", "start the Perch app (default)", runGUI)
}

// guiFlags are the app's options; most exist for scripted runs (make
// screenshot, make bench) rather than for people.
type guiFlags struct {
	hidden      bool     // start in the menubar only
	quickAsk    bool     // open the quick-ask popup once started
	context     int      // cap on the model's context (0: the model's)
	dataDir     string   // history folder (default: the OS's app-data folder)
	model       string   // model folder or repo to use (default: the saved choice)
	attach      []string // files attached as a drop would
	ask         string   // message sent once the window is up
	screenshots string   // folder: capture the windows, then quit
	timeout     time.Duration
	readyProbe  bool    // print "perch: ready" once the window is interactive
	seed        *uint64 // sample every answer with this seed (reproducible scripted runs)
	teachDemo   bool    // with screenshots: feedback, a Teach run, a chat with its adapter
}

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func runGUI(args []string) int {
	var f guiFlags
	fs := flag.NewFlagSet("gui", flag.ContinueOnError)
	fs.BoolVar(&f.hidden, "hidden", false, "start in the menubar or tray without opening the window (with no tray, the window opens)")
	fs.BoolVar(&f.quickAsk, "quick-ask", false, "open the quick-ask popup once started")
	fs.IntVar(&f.context, "context", 0, "cap the model's context at this many tokens (0: the model's own)")
	fs.StringVar(&f.dataDir, "data-dir", os.Getenv("PERCH_DATA_DIR"), "folder for chat history (default: the OS's app-data folder)")
	fs.StringVar(&f.model, "model", os.Getenv("PERCH_MODEL"), "model folder or Hugging Face repo to use")
	fs.Var((*listFlag)(&f.attach), "attach", "attach a file to the first message, as a drop would (repeatable)")
	fs.StringVar(&f.ask, "ask", "", "send this message once the window is up")
	fs.StringVar(&f.screenshots, "screenshots", "", "write PNG screenshots of the windows to this folder, then quit")
	fs.DurationVar(&f.timeout, "timeout", 3*time.Minute, "with -screenshots: give up (exit 1) after this long")
	fs.BoolVar(&f.teachDemo, "teach-demo", false, "with -screenshots: also give feedback on answers, train an adapter on the Teach page and chat with it")
	fs.BoolVar(&f.readyProbe, "ready-probe", false, "print a line once the window is interactive (for benchmarks)")
	seed := fs.Uint64("seed", 0, "sample every answer and seed every Teach run with this seed, so a scripted run is reproducible")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fs.Visit(func(fl *flag.Flag) {
		if fl.Name == "seed" {
			f.seed = seed
		}
	})
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "perch: unexpected arguments %q\n", fs.Args())
		return 2
	}
	return startGUI(f)
}
