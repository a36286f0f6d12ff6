package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"

	"perch/app/engines"
	"perch/app/hub"
	"perch/engine"
)

func init() {
	Register("models", "list, pull, remove and size-check models (list|pull|rm|fit)", func(args []string) int {
		return runModels(args, hub.New(), os.Stdout, os.Stderr)
	})
}

const modelsUsage = `usage: perch models <command>
  list [--catalog] [--json]           models in the Hugging Face cache (--catalog: the curated list)
  pull REPO[@REV] [--update] [--force] [--context N]
                                      download into the Hugging Face cache (resumable)
  rm REPO                             delete a model from the cache
  fit REPO[@REV]|DIR [--context N] [--backend B]   memory needed versus this machine
`

func runModels(args []string, h *hub.Hub, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stderr, modelsUsage)
		return 2
	}
	cmd, args := args[0], args[1:]
	var err error
	switch cmd {
	case "list", "ls":
		err = modelsList(args, h, stdout, stderr)
	case "pull":
		err = modelsPull(args, h, stdout, stderr)
	case "rm", "remove":
		err = modelsRemove(args, h, stdout, stderr)
	case "fit":
		err = modelsFit(args, h, stdout, stderr)
	default:
		fmt.Fprintf(stderr, "perch models: unknown command %q\n%s", cmd, modelsUsage)
		return 2
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "perch models %s: %v\n", cmd, err)
		return 2
	}
	fmt.Fprintf(stderr, "perch models %s: %v\n", cmd, err)
	return 1
}

var errUsage = errors.New("usage")

func usageErr(format string, a ...any) error {
	return fmt.Errorf("%w: %s", errUsage, fmt.Sprintf(format, a...))
}

func modelsList(args []string, h *hub.Hub, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("models list", flag.ContinueOnError)
	fs.SetOutput(stderr)
	catalog := fs.Bool("catalog", false, "show the curated models and whether each is downloaded")
	asJSON := fs.Bool("json", false, "print JSON")
	if words, err := ParseFlags(fs, args); err != nil {
		return err
	} else if len(words) > 0 {
		return usageErr("unexpected %q", words[0])
	}
	cached, err := h.List()
	if err != nil {
		return fmt.Errorf("read the cache %s: %w", h.Dir, err)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	defer tw.Flush()
	if *catalog {
		have := map[string]bool{}
		for _, m := range cached {
			if m.Complete {
				have[strings.ToLower(m.Repo)] = true
			}
		}
		if *asJSON {
			type entry struct {
				Repo, Name, Summary string
				DownloadBytes       int64
				RAMBytes            int64 `json:"RAMBytesAt8K"`
				Vision, Audio       bool
				Video, Default      bool
				Downloaded          bool
			}
			var out []entry
			for _, c := range hub.Catalog() {
				out = append(out, entry{c.Repo, c.Name, c.Summary, c.DiskBytes, c.RAMNeeded(0), c.Vision, c.Audio, c.Video, c.Default, have[strings.ToLower(c.Repo)]})
			}
			return json.NewEncoder(stdout).Encode(out)
		}
		fmt.Fprintln(tw, "NAME\tREPO\tDOWNLOAD\tRAM (8K ctx)\tINPUTS\tDOWNLOADED")
		for _, c := range hub.Catalog() {
			mark := "-"
			if have[strings.ToLower(c.Repo)] {
				mark = "yes"
			}
			name := c.Name
			if c.Default {
				name += " (default)"
			}
			in := hub.ModelInfo{Vision: c.Vision, Audio: c.Audio, Video: c.Video}.Modalities()
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", name, c.Repo, hub.FormatBytes(c.DiskBytes), hub.FormatBytes(c.RAMNeeded(0)), in, mark)
		}
		return nil
	}
	if *asJSON {
		if cached == nil {
			cached = []hub.CachedModel{}
		}
		return json.NewEncoder(stdout).Encode(cached)
	}
	if len(cached) == 0 {
		fmt.Fprintf(stdout, "no models in %s\ntry: perch models pull %s   (or perch models list --catalog)\n", h.Dir, hub.DefaultModel().Repo)
		return nil
	}
	fmt.Fprintln(tw, "REPO\tREVISION\tSIZE\tFAMILY\tINPUTS\tSTATUS")
	for _, m := range cached {
		status := "ready"
		switch {
		case !m.Complete:
			status = "incomplete (perch models pull " + m.Repo + ")"
		case !m.Info.Supported && m.Problem != "":
			status = m.Problem
		case !m.Info.Supported:
			status = "not a Gemma-4 model"
		}
		family := m.Info.Family
		if family == "" {
			family = "?"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", m.Repo, m.Revision(), hub.FormatBytes(m.Size), family, m.Info.Modalities(), status)
	}
	return nil
}

func modelsPull(args []string, h *hub.Hub, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("models pull", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var opts hub.PullOptions
	fs.BoolVar(&opts.Update, "update", false, "ask the Hub for a newer commit even if the model is cached")
	fs.BoolVar(&opts.SkipFit, "force", false, "download even if the model does not fit this machine's memory")
	fs.IntVar(&opts.Context, "context", 0, fmt.Sprintf("context length for the fit check (default %d)", hub.DefaultContext))
	words, err := ParseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(words) != 1 {
		return usageErr("want one REPO[@REV], e.g. %s", hub.DefaultModel().Repo)
	}
	repo, rev, err := hub.ParseRef(words[0])
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	bar := newPullBar(stderr)
	dir, err := h.PullWith(ctx, repo.String(), rev, opts, bar.update)
	bar.finish(err == nil)
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("stopped; run the same command to resume")
	}
	if err != nil {
		return err
	}
	if bar.cached {
		fmt.Fprintf(stdout, "%s@%s is already downloaded: %s\n", repo, rev, dir)
	} else {
		fmt.Fprintf(stdout, "%s@%s is ready: %s\n", repo, rev, dir)
	}
	return nil
}

// pullBar draws a pull's progress with schollz/progressbar.
type pullBar struct {
	w      io.Writer
	bar    *progressbar.ProgressBar
	file   string
	cached bool
}

func newPullBar(w io.Writer) *pullBar { return &pullBar{w: w} }

func (b *pullBar) update(p hub.Progress) {
	switch p.Stage {
	case hub.StageCached:
		b.cached = true
		return
	case hub.StageWaiting:
		fmt.Fprintf(b.w, "waiting for another download of %s to finish…\n", p.Repo)
		return
	case hub.StageListing:
		fmt.Fprintf(b.w, "listing %s…\n", p.Repo)
		return
	}
	if b.bar == nil && p.BytesTotal > 0 {
		b.bar = progressbar.NewOptions64(p.BytesTotal,
			progressbar.OptionSetWriter(b.w),
			progressbar.OptionShowBytes(true),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionSetWidth(30),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(b.w) }),
		)
	}
	if b.bar == nil {
		return
	}
	if p.File != b.file || p.Stage == hub.StageChecking {
		b.file = p.File
		desc := fmt.Sprintf("[%d/%d] %s", p.FileIndex, p.FileCount, p.File)
		if p.Stage == hub.StageChecking {
			desc += " (checking the partial download)"
		}
		b.bar.Describe(desc)
	}
	b.bar.Set64(p.BytesDone)
}

func (b *pullBar) finish(ok bool) {
	if b.bar == nil {
		return
	}
	if ok {
		b.bar.Finish()
	} else {
		b.bar.Exit()
		fmt.Fprintln(b.w)
	}
}

func modelsRemove(args []string, h *hub.Hub, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("models rm", flag.ContinueOnError)
	fs.SetOutput(stderr)
	words, err := ParseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(words) != 1 {
		return usageErr("want one REPO")
	}
	var size int64
	if list, err := h.List(); err == nil {
		for _, m := range list {
			if strings.EqualFold(m.Repo, words[0]) {
				size += m.Size
			}
		}
	}
	if err := h.Remove(words[0]); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "removed %s (%s)\n", words[0], hub.FormatBytes(size))
	return nil
}

func modelsFit(args []string, h *hub.Hub, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("models fit", flag.ContinueOnError)
	fs.SetOutput(stderr)
	contextLen := fs.Int("context", 0, fmt.Sprintf("context length in tokens (default %d)", hub.DefaultContext))
	backend := fs.String("backend", engine.BackendAuto, "the backend to size for: auto, mlx or go")
	words, err := ParseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(words) != 1 {
		return usageErr("want one REPO[@REV] or model folder")
	}
	h.Backend = engines.FitBackend(*backend)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	est, label, err := h.Fit(ctx, words[0], *contextLen)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s at %d tokens of context:\n%s", label, est.Context, est.Breakdown())
	if !est.Fits {
		return &hub.FitError{Model: label, Estimate: est}
	}
	return nil
}
