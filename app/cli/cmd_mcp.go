package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"

	"perch/app/desktop"
	"perch/app/mcphost"
	"perch/app/toolloop"
	"perch/engine"
)

// mcpFlags are ask's --mcp (repeatable), --approve and --max-rounds.
type mcpFlags struct {
	commands  []string
	approve   string
	maxRounds int
}

type mcpList struct{ list *[]string }

func (r mcpList) String() string     { return "" }
func (r mcpList) Set(v string) error { *r.list = append(*r.list, v); return nil }

func (m *mcpFlags) register(fs *flag.FlagSet) {
	fs.Var(mcpList{&m.commands}, "mcp", "an MCP server: '[NAME=value…] COMMAND ARGS…' run over stdio (it gets only PATH and the variables given), or a streamable-HTTP URL on this machine (repeatable); its tools are offered to the model")
	fs.StringVar(&m.approve, "approve", "ask", "which tool calls run: ask (y/N/always on the terminal), all, none")
	fs.IntVar(&m.maxRounds, "max-rounds", toolloop.DefaultMaxRounds, "most rounds of tool calls before the model must answer")
}

// envWord is a leading NAME=value word of --mcp: a variable the server
// gets (it gets no other but PATH).
var envWord = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// mcpStdin is where --approve ask reads the user's answers.
var mcpStdin io.Reader = os.Stdin

// mcpDir holds the pid files of the servers perch runs: in PERCH_DATA_DIR
// when set, else the OS's app-data folder.
func mcpDir() string {
	if d := os.Getenv("PERCH_DATA_DIR"); d != "" {
		return filepath.Join(d, "mcp")
	}
	return filepath.Join(desktop.DefaultDataDir(), "mcp")
}

// runAskMCP is perch ask with --mcp: the tool loop in the terminal.
func runAskMCP(f *askFlags, prompt string, stdout, stderr io.Writer) int {
	out := &askOutput{w: stdout, json: f.jsonOut}
	policy, err := mcphost.ParsePolicy(f.mcp.approve)
	if err != nil {
		return out.fail(stderr, fmt.Errorf("--approve: %w", err))
	}
	if f.tools.file != "" {
		return out.fail(stderr, fmt.Errorf("--tools and --mcp cannot be used together"))
	}
	choice := engine.ToolChoice{}
	switch c := f.tools.choice; c {
	case "", "auto":
	case "none":
		choice.Mode = engine.ToolNone
	case "required":
		choice.Mode = engine.ToolRequired
	default:
		choice = engine.ToolChoice{Mode: engine.ToolFunction, Name: c}
	}
	f.tools.choice = ""
	req, err := f.request(prompt)
	if err != nil {
		return out.fail(stderr, err)
	}
	var cfgs []mcphost.Config
	for i, line := range f.mcp.commands {
		name := fmt.Sprintf("mcp%d", i+1)
		if strings.HasPrefix(line, "http://") || strings.HasPrefix(line, "https://") {
			cfgs = append(cfgs, mcphost.Config{Name: name, URL: line}) // Check refuses other machines
			continue
		}
		argv, err := mcphost.SplitCommand(line)
		if err != nil {
			return out.fail(stderr, fmt.Errorf("--mcp: %w", err))
		}
		env := map[string]string{}
		for len(argv) > 1 && envWord.MatchString(argv[0]) {
			k, v, _ := strings.Cut(argv[0], "=")
			env[k] = v
			argv = argv[1:]
		}
		cfgs = append(cfgs, mcphost.Config{Name: name, Command: argv, Env: env})
	}
	host, err := mcphost.NewHost(cfgs, filepath.Join(mcpDir(), "pids"))
	if err != nil {
		return out.fail(stderr, fmt.Errorf("--mcp: %w", err))
	}
	defer host.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	tools, errs := host.Tools(ctx)
	for _, err := range errs {
		out.serverError(err, host.Statuses())
	}
	constrained := choice.Mode == engine.ToolRequired || choice.Mode == engine.ToolFunction
	offered, skipped := toolloop.Offer(tools, constrained)
	for _, s := range skipped {
		out.skipped(s)
	}
	if choice.Mode == engine.ToolFunction {
		for _, o := range offered {
			if o.Tool == choice.Name && o.Engine.Name != choice.Name {
				choice.Name = o.Engine.Name
			}
		}
	}
	if len(offered) == 0 && constrained {
		return out.fail(stderr, fmt.Errorf("--tool-choice %s: no server offered a tool the model can call", choice.Mode))
	}
	req.ToolChoice = choice
	// One call per round: each is approved and answered before the next
	// (and a small model's context is not spent on calls it cannot finish).
	one := false
	req.ParallelToolCalls = &one
	store, _ := mcphost.OpenAllowStore("") // perch ask remembers "always" for the run
	gate := &mcphost.Gate{Policy: policy, Store: store, Ask: terminalAsk(bufio.NewReader(mcpStdin), stderr)}
	e, err := openCLIEngine(f, stderr)
	if err != nil {
		return out.fail(stderr, err)
	}
	defer e.Close()
	loop := &toolloop.Loop{Gen: e, Tools: offered, Host: host, Gate: gate, MaxRounds: f.mcp.maxRounds, OnEvent: out.loopEvent}
	res, err := loop.Run(ctx, req)
	if err != nil {
		return out.fail(stderr, err)
	}
	if res.RoundLimit {
		fmt.Fprintf(stderr, "perch ask: the model still called tools after %d rounds; its last calls were not run\n", res.Rounds)
	}
	return 0
}

// terminalAsk asks on stderr and reads y, N or always from in.
func terminalAsk(in *bufio.Reader, stderr io.Writer) mcphost.AskFunc {
	return func(ctx context.Context, r mcphost.Request) (mcphost.Decision, error) {
		fmt.Fprintf(stderr, "Allow %s on server %s with %s? [y/N/always] ", r.Tool, r.Server, r.Arguments)
		type answer struct {
			line string
			err  error
		}
		ch := make(chan answer, 1)
		go func() {
			line, err := in.ReadString('\n')
			ch <- answer{line, err}
		}()
		select {
		case <-ctx.Done():
			return mcphost.Deny, ctx.Err()
		case a := <-ch:
			switch strings.ToLower(strings.TrimSpace(a.line)) {
			case "y", "yes":
				return mcphost.AllowOnce, nil
			case "a", "always":
				return mcphost.AllowAlways, nil
			}
			return mcphost.Deny, nil // anything else, end of input included
		}
	}
}

// loopEvent prints one step of the tool loop.
func (o *askOutput) loopEvent(ev toolloop.Event) {
	switch ev.Kind {
	case toolloop.Generation:
		o.event(ev.Engine, nil)
	case toolloop.Call:
		args := ev.Arguments
		if len(args) == 0 {
			args = json.RawMessage(`{}`)
		}
		if o.json {
			o.emit(map[string]any{"type": "tool_call", "round": ev.Round, "server": ev.Server, "name": ev.Name, "arguments": args})
			return
		}
		fmt.Fprintf(o.w, "\n[call] %s (server %s) %s\n", ev.Name, ev.Server, args)
	case toolloop.Result:
		if o.json {
			o.emit(map[string]any{"type": "tool_result", "round": ev.Round, "server": ev.Server, "name": ev.Name,
				"content": ev.Content, "is_error": ev.IsError, "denied": ev.Denied})
			return
		}
		tag := "result"
		switch {
		case ev.Denied:
			tag = "denied"
		case ev.IsError:
			tag = "error"
		}
		fmt.Fprintf(o.w, "[%s] %s\n", tag, ev.Content)
	}
}

func (o *askOutput) serverError(err error, sts []mcphost.Status) {
	var tail string
	for _, st := range sts {
		if st.State == mcphost.Failed && strings.Contains(err.Error(), "server "+st.Name+":") {
			tail = st.Stderr
		}
	}
	if o.json {
		o.emit(map[string]any{"type": "server_error", "error": err.Error(), "stderr": tail})
		return
	}
	fmt.Fprintf(o.w, "[server failed] %v\n", err)
	if tail = strings.TrimSpace(tail); tail != "" {
		lines := strings.Split(tail, "\n")
		fmt.Fprintf(o.w, "  its last words: %s\n", lines[len(lines)-1])
	}
}

func (o *askOutput) skipped(s toolloop.Skipped) {
	if o.json {
		o.emit(map[string]any{"type": "tool_skipped", "server": s.Server, "name": s.Tool, "reason": s.Reason})
		return
	}
	fmt.Fprintf(o.w, "[tool left out] %s (server %s): %s\n", s.Tool, s.Server, s.Reason)
}
