package mcphost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// State is where a server stands.
type State string

const (
	Stopped  State = "stopped"
	Starting State = "starting"
	Ready    State = "ready"
	Failed   State = "failed"
)

// Tool is one tool a server offers.
type Tool struct {
	Server      string
	Name        string
	Description string
	InputSchema json.RawMessage // a JSON Schema object
}

// Status is a server's state for Settings: Err says why it failed and
// Stderr holds the tail of what the server itself wrote (its Details).
type Status struct {
	Name   string
	State  State
	Err    string
	Stderr string
	Tools  []Tool
}

// Result is a finished call: Content is the result as text (capped at
// MaxResultText), IsError a tool error or a failure of the server.
type Result struct {
	Content string
	IsError bool
}

// Server is one configured server; its process or connection starts on
// first use and stops on Close. Safe for concurrent use.
type Server struct {
	cfg    Config
	pidDir string

	mu      sync.Mutex // held while starting, stopping and using the connection
	proc    *process
	session *mcp.ClientSession

	smu    sync.Mutex // guards what Status reports, never held long
	state  State
	err    string
	tools  []Tool
	stderr *tailBuffer
}

// NewServer returns a stopped server; pidDir ("" for none) holds the pid
// files of its processes.
func NewServer(cfg Config, pidDir string) (*Server, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	return &Server{cfg: cfg, pidDir: pidDir, state: Stopped}, nil
}

// Name is the server's configured name.
func (s *Server) Name() string { return s.cfg.Name }

// Status reports the server's state; it never waits on a start.
func (s *Server) Status() Status {
	s.smu.Lock()
	defer s.smu.Unlock()
	st := Status{Name: s.cfg.Name, State: s.state, Err: s.err, Tools: s.tools}
	if s.stderr != nil {
		st.Stderr = s.stderr.String()
	}
	return st
}

func (s *Server) setState(st State, err string) {
	s.smu.Lock()
	s.state, s.err = st, err
	s.smu.Unlock()
}

// Tools starts the server if needed and returns its tools.
func (s *Server) Tools(ctx context.Context) ([]Tool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.startLocked(ctx); err != nil {
		return nil, err
	}
	s.smu.Lock()
	defer s.smu.Unlock()
	return s.tools, nil
}

func (s *Server) startLocked(ctx context.Context) error {
	if s.session != nil && s.alive() {
		return nil
	}
	s.stopLocked()
	s.setState(Starting, "")
	timeout := s.cfg.StartTimeout
	if timeout <= 0 {
		timeout = DefaultStartTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := s.connect(ctx, timeout)
	var tools []Tool
	if err == nil {
		tools, err = s.listTools(ctx)
	}
	if err != nil {
		err = s.explain(err)
		s.stopKeepStderr()
		s.setState(Failed, err.Error())
		return err
	}
	s.smu.Lock()
	s.state, s.err, s.tools = Ready, "", tools
	s.smu.Unlock()
	return nil
}

func (s *Server) connect(ctx context.Context, timeout time.Duration) error {
	var t mcp.Transport
	if s.cfg.URL != "" {
		t = &mcp.StreamableClientTransport{Endpoint: s.cfg.URL, MaxRetries: -1,
			HTTPClient: &http.Client{Transport: limitedTransport{http.DefaultTransport}}}
	} else {
		p, err := startProcess(s.cfg, s.pidDir)
		if err != nil {
			return err
		}
		s.proc = p
		s.smu.Lock()
		s.stderr = p.stderr
		s.smu.Unlock()
		t = &mcp.IOTransport{Reader: io.NopCloser(p.stdout), Writer: p.stdin, MaxLineLength: -1}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "perch", Version: "1"}, nil)
	// A server that never answers initialize must not hold the caller
	// beyond ctx: Connect is run aside and abandoned on timeout.
	type res struct {
		cs  *mcp.ClientSession
		err error
	}
	ch := make(chan res, 1)
	go func() {
		cs, err := client.Connect(ctx, t, nil)
		ch <- res{cs, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			return r.err
		}
		s.session = r.cs
		return nil
	case <-ctx.Done():
		return fmt.Errorf("the server did not answer within %s", timeout)
	}
}

func (s *Server) listTools(ctx context.Context) ([]Tool, error) {
	var tools []Tool
	for t, err := range s.session.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		schema, _ := json.Marshal(t.InputSchema)
		tools = append(tools, Tool{Server: s.cfg.Name, Name: t.Name, Description: t.Description, InputSchema: schema})
		if len(tools) > 1000 {
			return nil, fmt.Errorf("the server lists over 1000 tools")
		}
	}
	return tools, nil
}

// alive reports whether a stdio server's process still runs.
func (s *Server) alive() bool {
	if s.proc == nil {
		return s.session != nil
	}
	done, _ := s.proc.exited()
	return !done
}

// explain turns a failure into the user's words: an exited process says
// so with its exit status, an oversized message says that.
func (s *Server) explain(err error) error {
	if s.proc != nil {
		if ferr := s.proc.stdout.failure(); ferr != nil {
			return ferr
		}
		select {
		case <-s.proc.done:
			return fmt.Errorf("the server exited (%v)", s.proc.waitErr)
		case <-time.After(100 * time.Millisecond):
		}
	}
	return err
}

// Call runs one tool call with the server's timeout. Every failure (the
// server cannot start, crashes, hangs, answers too much) is a Result with
// IsError set; Call returns only when ctx is cancelled or the call is over.
func (s *Server) Call(ctx context.Context, tool string, args json.RawMessage) Result {
	s.mu.Lock()
	if err := s.startLocked(ctx); err != nil {
		s.mu.Unlock()
		return Result{Content: fmt.Sprintf("server %s could not start: %v", s.cfg.Name, err), IsError: true}
	}
	cs := s.session
	s.mu.Unlock()
	timeout := s.cfg.CallTimeout
	if timeout <= 0 {
		timeout = DefaultCallTimeout
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var arguments any = map[string]any{}
	if len(args) > 0 {
		arguments = json.RawMessage(args)
	}
	type res struct {
		r   *mcp.CallToolResult
		err error
	}
	ch := make(chan res, 1)
	go func() {
		r, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: tool, Arguments: arguments})
		ch <- res{r, err}
	}()
	var r res
	select {
	case r = <-ch:
	case <-cctx.Done():
	}
	switch {
	case ctx.Err() != nil:
		return Result{Content: "stopped", IsError: true}
	case cctx.Err() != nil:
		msg := fmt.Sprintf("%s on server %s did not answer within %s", tool, s.cfg.Name, timeout)
		s.restart(msg) // a hung server is ended; the next call starts it afresh
		return Result{Content: msg, IsError: true}
	case r.err != nil:
		s.mu.Lock()
		err := s.explain(r.err)
		s.mu.Unlock()
		msg := fmt.Sprintf("%s on server %s failed: %v", tool, s.cfg.Name, err)
		s.restart(msg)
		return Result{Content: msg, IsError: true}
	}
	return Result{Content: resultText(r.r), IsError: r.r.IsError}
}

// restart stops the server after a failure, keeping the reason and its
// stderr for Details; the next use starts it again.
func (s *Server) restart(reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopKeepStderr()
	s.setState(Failed, reason)
}

// Close stops the server.
func (s *Server) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopLocked()
	s.setState(Stopped, "")
	return nil
}

func (s *Server) stopLocked() {
	s.stopKeepStderr()
	s.proc = nil
}

// stopKeepStderr ends the session and process but keeps s.proc (its
// stderr tail) for Status.
func (s *Server) stopKeepStderr() {
	if s.proc != nil {
		s.proc.stop()
	}
	if s.session != nil {
		go s.session.Close() // never wait on a server that does not answer
		s.session = nil
	}
}

// resultText renders a result's content as text: text parts as they are,
// others as a short note; the whole capped at MaxResultText.
func resultText(r *mcp.CallToolResult) string {
	var b strings.Builder
	for i, c := range r.Content {
		if i > 0 {
			b.WriteString("\n")
		}
		switch c := c.(type) {
		case *mcp.TextContent:
			b.WriteString(c.Text)
		case *mcp.ImageContent:
			fmt.Fprintf(&b, "[image %s, %d bytes]", c.MIMEType, len(c.Data))
		case *mcp.AudioContent:
			fmt.Fprintf(&b, "[audio %s, %d bytes]", c.MIMEType, len(c.Data))
		case *mcp.ResourceLink:
			fmt.Fprintf(&b, "[resource %s]", c.URI)
		case *mcp.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				b.WriteString(c.Resource.Text)
			} else if c.Resource != nil {
				fmt.Fprintf(&b, "[resource %s]", c.Resource.URI)
			}
		default:
			b.WriteString("[unsupported content]")
		}
		if b.Len() > MaxResultText {
			break
		}
	}
	if len(r.Content) == 0 && r.StructuredContent != nil {
		data, _ := json.Marshal(r.StructuredContent)
		b.Write(data)
	}
	return capText(b.String(), MaxResultText)
}

// capText cuts s to at most max bytes (on a character boundary) with a note.
func capText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && (s[cut]&0xC0) == 0x80 {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n[truncated: %d more bytes]", len(s)-cut)
}

// limitedTransport caps each HTTP response body at MaxMessage bytes.
type limitedTransport struct{ rt http.RoundTripper }

func (l limitedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := l.rt.RoundTrip(req)
	if err == nil && resp.Body != nil {
		resp.Body = &limitedBody{rc: resp.Body, left: MaxMessage}
	}
	return resp, err
}

type limitedBody struct {
	rc   io.ReadCloser
	left int
}

var errBodyTooLarge = errors.New("the server sent a response over the size limit")

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, errBodyTooLarge
	}
	if len(p) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= n
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }
