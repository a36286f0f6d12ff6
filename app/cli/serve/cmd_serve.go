package serve

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"perch/app/cli"
	"perch/app/desktop"
	"perch/app/engines"
	"perch/app/history"
	"perch/app/hub"
	"perch/app/server"
	"perch/engine"
)

func init() {
	cli.Register("serve", "OpenAI-compatible local API (/v1/chat/completions) for one model", func(args []string) int {
		return runServe(args, os.Stdout, os.Stderr)
	})
}

type serveFlags struct {
	addr, model, apiKey, backend string
	adapter, library             string
	queue, contextLen            int
	force, quiet, exact          bool
	origins                      stringList
	lookup                       server.Lookup // resolves --addr's name (nil: the system's)
}

type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func parseServe(args []string, stderr io.Writer) (*serveFlags, error) {
	f := &serveFlags{}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.addr, "addr", server.DefaultAddr, "listen address; beyond loopback needs --api-key")
	fs.StringVar(&f.model, "model", "", "model folder or Hugging Face repo REPO[@REV] in the cache (default: $PERCH_MODEL, else "+hub.DefaultModel().Repo+")")
	fs.StringVar(&f.apiKey, "api-key", os.Getenv("PERCH_API_KEY"), "require Authorization: Bearer KEY (default $PERCH_API_KEY)")
	fs.StringVar(&f.backend, "backend", engine.BackendAuto, "auto, mlx or go")
	fs.BoolVar(&f.exact, "exact", false, "Go backend: exact float32 products everywhere (default: 4-bit weights meet int8 activations, as llama.cpp's Q8_0, on models at least 1024 wide)")
	fs.StringVar(&f.adapter, "adapter", "", "apply this LoRA adapter folder to every request (Perch's or mlx-lm's); served as <model>+<folder name>")
	fs.StringVar(&f.library, "library", desktop.DefaultDataDir(), "also offer the Teach library's adapters for this model, as <model>+<name> (the app's data folder; \"\" for none)")
	fs.IntVar(&f.queue, "queue", 8, "requests that may wait while one runs; more get HTTP 429 at once")
	fs.IntVar(&f.contextLen, "context", 0, "context length in tokens (default: the model's, at most 32768)")
	fs.BoolVar(&f.force, "force", false, "load even if the fit check says the model does not fit in memory")
	fs.BoolVar(&f.quiet, "quiet", false, "do not log requests")
	fs.Var(&f.origins, "allow-origin", "also accept browser requests from this origin (repeatable), e.g. https://my.app")
	words, err := cli.ParseFlags(fs, args)
	if err != nil {
		return nil, err
	}
	if len(words) > 0 {
		return nil, fmt.Errorf("unexpected %q (the model goes in --model)", words[0])
	}
	if f.queue < 1 {
		return nil, fmt.Errorf("--queue must be at least 1")
	}
	return f, nil
}

// serving is a running `perch serve`.
type serving struct {
	srv  *server.Server
	eng  *engine.Engine
	addr net.Addr
	id   string
}

func (s *serving) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.srv.Shutdown(ctx)
	s.eng.Close()
}

// startServe checks the address, finds the model, checks that it fits,
// loads it and starts the server.
func startServe(f *serveFlags, stderr io.Writer) (*serving, error) {
	if _, err := server.ListenAddr(f.addr, f.apiKey, f.lookup); err != nil {
		return nil, err // before the model loads, and before anything listens
	}
	dir, err := engines.Resolve(f.model)
	if err != nil {
		return nil, err
	}
	h := hub.New()
	h.Backend = engines.FitBackend(f.backend)
	est, err := h.FitDir(dir, f.fitContext())
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "perch serve: fit check skipped: %v\n", err)
	case !est.Fits && f.contextLen == 0 && est.MaxContext >= 2048:
		// No context asked for: take the largest that fits, as LM Studio does.
		f.contextLen = est.MaxContext
		fmt.Fprintf(stderr, "perch serve: context lowered to %d tokens to fit in memory (%s)\n", f.contextLen, est.Budget.Source)
	case !est.Fits && !f.force:
		return nil, fmt.Errorf("%w (or --force to load anyway)", &hub.FitError{Model: modelID(f.model, dir), Estimate: est})
	}
	e, err := engines.Open(dir, engines.Settings{Backend: f.backend, Adapter: f.adapter, QueueSize: f.queue, MaxContext: f.contextLen, Exact: f.exact})
	if err != nil {
		return nil, err
	}
	info := e.Info()
	base := modelID(f.model, dir)
	id := base
	if f.adapter != "" { // every request runs with it: the served model is the pair, as the app's local API names it
		id += "+" + filepath.Base(filepath.Clean(f.adapter))
	}
	var logf func(string, ...any)
	if !f.quiet {
		logf = log.New(stderr, "perch serve: ", log.LstdFlags).Printf
	}
	srv := server.New(server.Options{
		Engine: e, APIKey: f.apiKey, AllowedOrigins: f.origins, Logf: logf, Lookup: f.lookup,
		Model: server.ModelInfo{ID: id, Base: base, Created: time.Now(), Vision: info.Vision, Audio: info.Audio,
			Video: info.Video, ContextLength: info.ContextLength},
		Adapters: f.libraryAdapters(base, dir),
	})
	addr, err := srv.Start(f.addr)
	if err != nil {
		e.Close()
		return nil, err
	}
	return &serving{srv: srv, eng: e, addr: addr, id: id}, nil
}

// libraryAdapters offers the Teach library's adapters made for the model
// (named by its id or its folder), read at each request as the app's
// local API does; nil without --library.
func (f *serveFlags) libraryAdapters(base, dir string) func() ([]server.AdapterModel, string) {
	if f.library == "" {
		return nil
	}
	return func() ([]server.AdapterModel, string) {
		store, err := history.OpenLibrary(f.library)
		if err != nil {
			return nil, ""
		}
		defer store.Close()
		list, _ := server.Library(store, base, "")
		if dir != base {
			more, _ := server.Library(store, dir, "")
			list = append(list, more...)
		}
		return list, ""
	}
}

// fitContext is the context the fit check assumes: --context, else the
// engine's default cap.
func (f *serveFlags) fitContext() int {
	if f.contextLen > 0 {
		return f.contextLen
	}
	return 32768
}

// modelID is the name clients see: the repo id when the model came from
// the cache, else the folder name.
func modelID(arg, dir string) string {
	if arg == "" {
		arg = os.Getenv("PERCH_MODEL")
	}
	if arg == "" {
		return hub.DefaultModel().Repo
	}
	if st, err := os.Stat(arg); err == nil && st.IsDir() {
		return filepath.Base(filepath.Clean(dir))
	}
	if repo, _, err := hub.ParseRef(arg); err == nil {
		return repo.String()
	}
	return filepath.Base(filepath.Clean(dir))
}

func runServe(args []string, stdout, stderr io.Writer) int {
	f, err := parseServe(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "perch serve:", err)
		return 2
	}
	s, err := startServe(f, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "perch serve:", err)
		return 1
	}
	auth := ""
	if f.apiKey != "" {
		auth = " (API key required)"
	}
	fmt.Fprintf(stdout, "Serving %s at http://%s/v1%s — OpenAI-compatible; Ctrl-C stops.\n", s.id, s.addr, auth)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	fmt.Fprintln(stderr, "perch serve: stopping")
	s.close()
	return 0
}
