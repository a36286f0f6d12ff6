// Package jinja renders Jinja2 chat templates as Hugging Face's
// apply_chat_template does (ImmutableSandboxedEnvironment with trim_blocks,
// lstrip_blocks and loop controls), with Python's printing rules, and within
// hard limits: every render is bounded in steps, output, allocated bytes,
// macro depth and time, and stops with an error instead of hanging or
// exhausting memory. Templates from downloaded checkpoints are untrusted.
//
// It owns the whole interpreter and nothing else. Data flows one way:
// template source → lexer → parser (an AST) → evaluator over Values built
// from the caller's context → text; engine/chattemplate gives it the
// model's template and the messages, and nothing flows back.
//
// Port of the subset of jinja2 (lexer, parser, runtime, filters, tests) that
// chat templates use, written from the Jinja2 documentation and behaviour.
// Parity notes:
//   - values print as Python's str(): None, True, 3.0, 1e-05, ['a', 'b'];
//     trim/strip use Python's str.isspace set;
//   - dicts keep insertion order; dictsort and sort compare strings
//     case-insensitively by default, as Jinja2 does;
//   - mutating methods (list.append, dict.update, …) are refused, as in the
//     immutable sandbox; tojson is HF's (json.dumps, ensure_ascii=False).
package jinja

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"time"
)

// Limits bound one render. A zero field takes the default.
type Limits struct {
	Steps   int           // statements, loop iterations and calls
	Output  int           // bytes of rendered text
	Alloc   int64         // bytes of strings, list slots and captured text created, cumulative
	Depth   int           // nested macro calls
	Timeout time.Duration // wall clock, on top of the caller's context
}

// DefaultLimits is generous for real chat templates and small enough that a
// hostile one stops within seconds and a few hundred MB. (The Gemma 4
// template scans back over the history for every message: 600 messages
// take ~4×10^5 steps, 2,000 take ~4×10^6; 20M allows ~4,500.)
var DefaultLimits = Limits{
	Steps:   20_000_000,
	Output:  32 << 20,
	Alloc:   512 << 20,
	Depth:   200,
	Timeout: 10 * time.Second,
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	if l.Steps > 0 {
		d.Steps = l.Steps
	}
	if l.Output > 0 {
		d.Output = l.Output
	}
	if l.Alloc > 0 {
		d.Alloc = l.Alloc
	}
	if l.Depth > 0 {
		d.Depth = l.Depth
	}
	if l.Timeout > 0 {
		d.Timeout = l.Timeout
	}
	return d
}

// ErrLimit is wrapped by every error that stops a render at a limit.
var ErrLimit = errors.New("template stopped at a limit")

// RaisedError is what the template's raise_exception(message) returns.
type RaisedError struct{ Message string }

func (e *RaisedError) Error() string { return "template raised an error: " + e.Message }

// Template is a parsed template; safe for concurrent renders.
type Template struct {
	nodes []node
}

// Parse parses template source.
func Parse(src string) (t *Template, err error) {
	defer func() { // a bug here must not take the app down either
		if rec := recover(); rec != nil {
			t, err = nil, fmt.Errorf("template parse failed: internal error: %v", rec)
		}
	}()
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	nodes, err := parseTemplate(toks)
	if err != nil {
		return nil, err
	}
	return &Template{nodes: nodes}, nil
}

// Render runs the template with the given top-level variables (they shadow
// the built-in globals). now is what strftime_now formats.
func (t *Template) Render(ctx context.Context, vars map[string]Value, now time.Time, lim Limits) (out string, err error) {
	lim = lim.withDefaults()
	ctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()
	r := &renderer{ctx: ctx, lim: lim, now: now}
	r.globals = newScope(nil, 8)
	for k, v := range globals() {
		r.globals.set(k, v)
	}
	root := newScope(r.globals, len(vars)+4)
	for k, v := range vars {
		root.set(k, v)
	}
	var top strings.Builder
	r.out = &top
	defer func() {
		if rec := recover(); rec != nil {
			switch e := rec.(type) {
			case renderFail:
				out, err = "", e.err
			default: // a bug here must not take the app down
				out, err = "", fmt.Errorf("template render failed: internal error: %v\n%s", rec, debug.Stack())
			}
		}
	}()
	r.execBody(t.nodes, root)
	return top.String(), nil
}

type renderer struct {
	ctx     context.Context
	lim     Limits
	now     time.Time
	steps   int
	alloc   int64
	depth   int
	capture int // > 0 while output goes to a macro or block capture
	out     *strings.Builder
	globals *scope
}

type renderFail struct{ err error }

func (r *renderer) fail(format string, args ...any) {
	panic(renderFail{fmt.Errorf("template: "+format, args...)})
}

func (r *renderer) limit(format string, args ...any) {
	panic(renderFail{fmt.Errorf("%w: "+format, append([]any{ErrLimit}, args...)...)})
}

// tick counts one step and, now and then, checks the context.
func (r *renderer) tick() {
	r.steps++
	if r.steps > r.lim.Steps {
		r.limit("more than %d steps (a loop that does not end?)", r.lim.Steps)
	}
	if r.steps&1023 == 0 {
		if err := r.ctx.Err(); err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				r.limit("rendering took longer than %v", r.lim.Timeout)
			}
			panic(renderFail{fmt.Errorf("template: %w", err)})
		}
	}
}

// charge accounts for n bytes about to be allocated.
func (r *renderer) charge(n int64) {
	if n < 0 || r.alloc+n > r.lim.Alloc {
		r.limit("more than %d MiB allocated (a value that keeps growing?)", r.lim.Alloc>>20)
	}
	r.alloc += n
}

// newString accounts for a string of n bytes about to be built; no single
// string may be larger than the output limit.
func (r *renderer) newString(n int64) {
	if n > int64(r.lim.Output) {
		r.limit("a string of %d MiB (more than the %d MiB output limit)", n>>20, r.lim.Output>>20)
	}
	r.charge(n)
}

func (r *renderer) write(s string) {
	if s == "" {
		return
	}
	r.charge(int64(len(s)))
	if r.out.Len()+len(s) > r.lim.Output {
		r.limit("output larger than %d MiB", r.lim.Output>>20)
	}
	r.out.WriteString(s)
}

// str converts a value to text within the allocation budget.
func (r *renderer) str(v Value) string {
	if s, ok := v.(string); ok {
		return s
	}
	if _, ok := v.(Undefined); ok {
		return ""
	}
	b := &boundedBuilder{max: int(min(r.lim.Alloc-r.alloc, int64(r.lim.Output)))}
	writeRepr(b, v, 0)
	if b.over {
		r.limit("printing a value larger than %d MiB", r.lim.Output>>20)
	}
	r.charge(int64(b.Len()))
	return b.String()
}

// scope holds the variables of one level (template, loop body, macro
// call). Levels hold a handful of names, so a slice beats a map.
type scope struct {
	names  []string
	vals   []Value
	parent *scope
	// captured: a macro closes over this scope, so a loop must not reuse it.
	captured bool
}

func newScope(parent *scope, size int) *scope {
	return &scope{names: make([]string, 0, size), vals: make([]Value, 0, size), parent: parent}
}

func (s *scope) local(name string) (Value, bool) {
	for i, n := range s.names {
		if n == name {
			return s.vals[i], true
		}
	}
	return nil, false
}

func (s *scope) lookup(name string) (Value, bool) {
	for ; s != nil; s = s.parent {
		if v, ok := s.local(name); ok {
			return v, true
		}
	}
	return nil, false
}

func (s *scope) set(name string, v Value) {
	for i, n := range s.names {
		if n == name {
			s.vals[i] = v
			return
		}
	}
	s.names = append(s.names, name)
	s.vals = append(s.vals, v)
}

func (s *scope) reset() {
	clear(s.vals) // drop references for the GC
	s.names, s.vals = s.names[:0], s.vals[:0]
}

func (s *scope) child() *scope { return &scope{parent: s} }
