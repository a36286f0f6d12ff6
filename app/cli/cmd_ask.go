package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"

	"perch/app/engines"
	"perch/engine"
	"perch/media/npy"
)

func init() {
	RegisterStreams("ask", "answer one prompt and stream it to stdout", func(args []string, _ io.Reader, stdout, stderr io.Writer) int {
		return runAsk(args, stdout, stderr)
	})
}

// mediaList collects --image/--audio/--video in the order given.
type mediaList struct {
	kind  engine.PartType
	items *[]mediaArg
}

type mediaArg struct {
	kind engine.PartType
	path string
}

func (m mediaList) String() string { return "" }
func (m mediaList) Set(v string) error {
	*m.items = append(*m.items, mediaArg{m.kind, v})
	return nil
}

type askFlags struct {
	model, backend, system, promptIDs, dumpLogits string
	adapter                                       string
	maxTokens, topK, maxSoftTokens, maxFrames     int
	temperature, topP, fps                        float64
	seed                                          uint64
	ignoreEOS, jsonOut, think, exact              bool
	media                                         []mediaArg
	set                                           map[string]bool
	tools                                         toolFlags
	mcp                                           mcpFlags
}

func parseAsk(args []string, stderr io.Writer) (*askFlags, string, error) {
	f, prompt, err := parseGenFlags("ask", args, stderr)
	if err == nil && prompt == "" && f.promptIDs == "" {
		err = fmt.Errorf("no prompt: perch ask [flags] \"your question\"")
	}
	return f, prompt, err
}

// parseGenFlags parses the generation flags shared by ask and chat; the
// words left over are the prompt.
func parseGenFlags(verb string, args []string, stderr io.Writer) (*askFlags, string, error) {
	f := &askFlags{}
	fs := flag.NewFlagSet(verb, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.model, "model", "", "model folder or Hugging Face repo (REPO[@REV]) in the local cache")
	fs.StringVar(&f.backend, "backend", engine.BackendAuto, "auto, mlx or go")
	fs.BoolVar(&f.exact, "exact", false, "Go backend: exact float32 products everywhere (default: 4-bit weights meet int8 activations, as llama.cpp's Q8_0, on models at least 1024 wide)")
	fs.StringVar(&f.system, "system", "", "system prompt")
	fs.IntVar(&f.maxTokens, "max-tokens", 0, "most tokens to generate (0: 2048, within the context)")
	fs.Float64Var(&f.temperature, "temperature", 0, "sampling temperature (0: greedy; default: the model's)")
	fs.Float64Var(&f.topP, "top-p", 0, "nucleus sampling (default: the model's)")
	fs.IntVar(&f.topK, "top-k", 0, "top-k sampling (default: the model's)")
	fs.Uint64Var(&f.seed, "seed", 0, "random seed")
	fs.BoolVar(&f.ignoreEOS, "ignore-eos", false, "decode through stop tokens")
	fs.BoolVar(&f.jsonOut, "json", false, "print one JSON object per line")
	fs.BoolVar(&f.think, "think", false, "let the model think first (thought channel)")
	fs.StringVar(&f.promptIDs, "prompt-ids", "", "comma-separated token ids fed as is (no chat template)")
	fs.StringVar(&f.dumpLogits, "dump-logits", "", "write the prefill's last-position logits as float32 .npy")
	fs.StringVar(&f.adapter, "adapter", "", "apply this LoRA adapter folder (Perch's or mlx-lm's adapters.safetensors + adapter_config.json)")
	// mlx_lm.generate's names for the same settings.
	fs.StringVar(&f.adapter, "adapter-path", "", "mlx_lm.generate's name for --adapter")
	fs.Float64Var(&f.temperature, "temp", 0, "mlx_lm.generate's name for --temperature")
	fs.StringVar(&f.system, "system-prompt", "", "mlx_lm.generate's name for --system")
	var flagPrompt string
	fs.StringVar(&flagPrompt, "prompt", "", "the prompt, as mlx_lm.generate takes it (or give it as words after the flags)")
	fs.StringVar(&flagPrompt, "p", "", "short for --prompt")
	fs.Var(mediaList{engine.PartImage, &f.media}, "image", "attach an image (repeatable)")
	fs.Var(mediaList{engine.PartAudio, &f.media}, "audio", "attach an audio clip (repeatable)")
	fs.Var(mediaList{engine.PartVideo, &f.media}, "video", "attach a video (repeatable)")
	fs.IntVar(&f.maxSoftTokens, "max-soft-tokens", 0, "image soft-token budget: 70, 140, 280, 560 or 1120")
	fs.Float64Var(&f.fps, "fps", 0, "video frames sampled per second (default 2)")
	fs.IntVar(&f.maxFrames, "max-frames", 0, "most video frames (default 32)")
	if verb == "ask" {
		f.tools.register(fs)
		f.mcp.register(fs)
	}
	var words []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, "", err
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		words = append(words, args[0])
		args = args[1:]
	}
	f.set = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	if f.set["temp"] {
		f.set["temperature"] = true
	}
	if flagPrompt != "" {
		words = append([]string{flagPrompt}, words...)
	}
	return f, strings.Join(words, " "), nil
}

// settings is a request with the flags' generation settings and no content.
func (f *askFlags) settings() engine.Request {
	req := engine.Request{MaxTokens: f.maxTokens, IgnoreEOS: f.ignoreEOS, EnableThinking: f.think,
		MaxSoftTokens: f.maxSoftTokens, VideoFPS: f.fps, MaxFrames: f.maxFrames}
	if f.set["temperature"] {
		t := float32(f.temperature)
		req.Sampling.Temperature = &t
	}
	if f.set["top-p"] {
		p := float32(f.topP)
		req.Sampling.TopP = &p
	}
	if f.set["top-k"] {
		req.Sampling.TopK = &f.topK
	}
	if f.set["seed"] {
		req.Sampling.Seed = &f.seed
	}
	return req
}

// attachments reads the --image/--audio/--video files, in order.
func attachments(media []mediaArg) ([]engine.Part, error) {
	var parts []engine.Part
	for _, m := range media {
		data, err := os.ReadFile(m.path)
		if err != nil {
			return nil, fmt.Errorf("--%s: %w", m.kind, err)
		}
		parts = append(parts, engine.Part{Type: m.kind, Data: data, Name: m.path})
	}
	return parts, nil
}

func (f *askFlags) request(prompt string) (engine.Request, error) {
	req := f.settings()
	if err := f.tools.apply(&req); err != nil {
		return req, err
	}
	if f.promptIDs != "" {
		for _, s := range strings.Split(f.promptIDs, ",") {
			v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
			if err != nil {
				return req, fmt.Errorf("--prompt-ids: %q is not a token id", s)
			}
			req.PromptIDs = append(req.PromptIDs, int32(v))
		}
	}
	if f.system != "" {
		req.Messages = append(req.Messages, engine.Text(engine.RoleSystem, f.system))
	}
	parts, err := attachments(f.media)
	if err != nil {
		return req, err
	}
	user := engine.Message{Role: engine.RoleUser, Content: parts}
	if prompt != "" {
		user.Content = append(user.Content, engine.Part{Type: engine.PartText, Text: prompt})
	}
	req.Messages = append(req.Messages, user)
	return req, nil
}

func runAsk(args []string, stdout, stderr io.Writer) int {
	f, prompt, err := parseAsk(args, stderr)
	if err == flagErrHelp {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "perch ask:", err)
		return 2
	}
	if len(f.mcp.commands) > 0 {
		return runAskMCP(f, prompt, stdout, stderr)
	}
	out := &askOutput{w: stdout, json: f.jsonOut}
	req, err := f.request(prompt)
	if err != nil {
		return out.fail(stderr, err)
	}
	e, err := openCLIEngine(f, stderr)
	if err != nil {
		return out.fail(stderr, err)
	}
	defer e.Close()
	var dumpErr error
	if f.dumpLogits != "" {
		req.DumpLogits = func(v []float32) {
			dumpErr = npy.WriteFile(f.dumpLogits, &npy.Array{Shape: []int{len(v)}, F32: v})
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	events, err := e.Generate(ctx, req)
	if err != nil {
		return out.fail(stderr, err)
	}
	code := 0
	if c := engine.Collect(events, out.event); c.Err != nil {
		code = out.fail(stderr, c.Err)
	}
	if dumpErr != nil {
		return out.fail(stderr, fmt.Errorf("--dump-logits: %w", dumpErr))
	}
	return code
}

// openCLIEngine loads --model on --backend and notes unused checkpoint tensors.
func openCLIEngine(f *askFlags, stderr io.Writer) (*engine.Engine, error) {
	dir, err := engines.Resolve(f.model)
	if err != nil {
		return nil, err
	}
	e, err := engines.Open(dir, engines.Settings{Backend: f.backend, Adapter: f.adapter, Exact: f.exact})
	if err != nil {
		return nil, err
	}
	if unknown := e.Info().Unknown; len(unknown) > 0 {
		fmt.Fprintf(stderr, "perch: note: the checkpoint has %d tensors this model does not use (first: %s)\n", len(unknown), unknown[0])
	}
	return e, nil
}

var flagErrHelp = flag.ErrHelp

// askOutput prints plain text or JSON lines.
type askOutput struct {
	w        io.Writer
	json     bool
	thinking bool
	verb     string // for error lines; "ask" when empty
}

func (o *askOutput) emit(v any) {
	b, _ := json.Marshal(v)
	fmt.Fprintf(o.w, "%s\n", b)
}

// event prints what one generation event adds (engine.Collect calls it).
func (o *askOutput) event(ev engine.Event, _ *engine.Collector) {
	switch ev.Kind {
	case engine.EventToken:
		o.token(ev.Token)
	case engine.EventToolCall:
		o.toolCall(ev.Call)
	case engine.EventDone:
		o.done(ev)
	}
}

func (o *askOutput) token(t engine.Token) {
	if o.json {
		if t.ID >= 0 {
			o.emit(map[string]any{"type": "token", "id": t.ID, "text": t.Text, "thinking": t.Thinking})
		} else if t.Text != "" {
			o.emit(map[string]any{"type": "text", "text": t.Text, "thinking": t.Thinking})
		}
		return
	}
	if t.Thinking != o.thinking && t.Text != "" {
		if t.Thinking {
			fmt.Fprint(o.w, "[thinking] ")
		} else {
			fmt.Fprint(o.w, "\n[answer] ")
		}
		o.thinking = t.Thinking
	}
	fmt.Fprint(o.w, t.Text)
}

func (o *askOutput) done(ev engine.Event) {
	s := ev.Stats
	if !o.json {
		fmt.Fprintln(o.w)
		return
	}
	ids := s.TokenIDs
	if ids == nil {
		ids = []int32{}
	}
	o.emit(map[string]any{"type": "done", "token_ids": ids, "stop_reason": ev.StopReason, "stats": map[string]any{
		"prompt_tokens": s.PromptTokens, "generated_tokens": s.GeneratedTokens,
		"time_to_first_token_ms": ms(s.TimeToFirst), "prefill_tok_s": s.PrefillTokS, "decode_tok_s": s.DecodeTokS,
		"peak_memory_bytes": s.PeakMemory, "backend": s.Backend, "host_ms_per_step": ms(s.HostPerStep),
		"tower_ms": ms(s.TowerTime), "encoder_cache_hits": s.EncoderHits, "prefix_reused_tokens": s.PrefixReused,
		"prompt_tokens_by_kind": s.PromptByKind,
	}})
}

func (o *askOutput) fail(stderr io.Writer, err error) int {
	if o.json {
		o.emit(map[string]any{"type": "error", "message": err.Error()})
	} else {
		verb := o.verb
		if verb == "" {
			verb = "ask"
		}
		fmt.Fprintf(stderr, "perch %s: %v\n", verb, err)
	}
	return 1
}
