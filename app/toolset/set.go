// Package toolset keeps the user's MCP servers for the app: their setup
// (tools.json in the data folder: command, arguments and environment, or
// a URL on this machine, and whether each is enabled), the servers
// themselves (started when first needed, stopped on Close; pid files let
// the next start end what a killed Perch left), and the "always allow"
// approvals (approvals.json). It implements chat.ToolSource for answers
// and ui.ToolSettings for Settings → Tools.
package toolset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"perch/app/mcphost"
	"perch/engine/grammar"
	"perch/internal/durable"
	"perch/ui"
)

// Files in the data folder.
const (
	ConfigName    = "tools.json" // the pid files go under mcp/pids, as perch ask's
	ApprovalsName = "approvals.json"
	// maxConfig bounds tools.json; a larger file is refused unread.
	maxConfig = 1 << 20
	// retryAfter is how long an answer leaves a failed server alone
	// before trying to start it again (Settings' Check tries at once).
	retryAfter = time.Minute
)

// Entry is one server as set up, enabled or not.
type Entry struct {
	mcphost.Config
	Enabled bool `json:"enabled"`
}

type file struct {
	Servers []Entry `json:"servers"`
}

// Set is the user's servers.
type Set struct {
	path   string // tools.json ("" kept in memory)
	pidDir string
	allow  *mcphost.AllowStore

	mu       sync.Mutex
	entries  []Entry
	servers  map[string]*mcphost.Server // enabled servers, by name
	failedAt map[string]time.Time
}

// Open reads dir's tools.json and approvals.json (missing files are
// empty) and ends servers a killed Perch left running. dir "" keeps
// everything in memory.
func Open(dir string) (*Set, error) {
	s := &Set{servers: map[string]*mcphost.Server{}, failedAt: map[string]time.Time{}}
	approvals := ""
	if dir != "" {
		s.path, s.pidDir = filepath.Join(dir, ConfigName), filepath.Join(dir, "mcp", "pids")
		approvals = filepath.Join(dir, ApprovalsName)
		if err := os.MkdirAll(s.pidDir, 0o700); err != nil {
			return nil, err
		}
		mcphost.ReapLeftovers(s.pidDir)
	}
	allow, err := mcphost.OpenAllowStore(approvals)
	if err != nil {
		return nil, err
	}
	s.allow = allow
	if s.path != "" {
		entries, err := readConfig(s.path)
		if err != nil {
			return nil, err
		}
		s.entries = entries
	}
	for _, e := range s.entries {
		if e.Enabled {
			if err := s.startEntryLocked(e); err != nil {
				return nil, err
			}
		}
	}
	return s, nil
}

// readConfig reads tools.json: a regular file, at most maxConfig bytes,
// each server's setup checked.
func readConfig(path string) ([]Entry, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxConfig+1))
	if err != nil {
		return nil, err
	}
	return parseConfig(data)
}

func parseConfig(data []byte) ([]Entry, error) {
	if len(data) > maxConfig {
		return nil, fmt.Errorf("the tools file is over %d bytes", maxConfig)
	}
	var f file
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("the tools file is not readable: %v", err)
	}
	seen := map[string]bool{}
	for _, e := range f.Servers {
		if err := e.Check(); err != nil {
			return nil, err
		}
		if seen[e.Name] {
			return nil, fmt.Errorf("two servers are named %q", e.Name)
		}
		seen[e.Name] = true
	}
	return f.Servers, nil
}

func (s *Set) startEntryLocked(e Entry) error {
	srv, err := mcphost.NewServer(e.Config, s.pidDir)
	if err != nil {
		return err
	}
	s.servers[e.Name] = srv
	return nil
}

func (s *Set) saveLocked() error {
	if s.path == "" {
		return nil
	}
	data, err := json.MarshalIndent(file{Servers: s.entries}, "", "  ")
	if err != nil {
		return err
	}
	return durable.WriteFile(s.path, append(data, '\n'), 0o700)
}

// Servers lists the enabled servers, in order, with their states.
func (s *Set) Servers() []ui.ToolServer {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []ui.ToolServer
	for _, e := range s.entries {
		if srv := s.servers[e.Name]; e.Enabled && srv != nil {
			out = append(out, ui.ToolServer{Name: e.Name, State: string(srv.Status().State)})
		}
	}
	return out
}

// Tools lists the named enabled servers' tools, starting them if needed.
// A server that failed within retryAfter is left out without waiting.
func (s *Set) Tools(ctx context.Context, names []string) []mcphost.Tool {
	var out []mcphost.Tool
	for _, name := range names {
		s.mu.Lock()
		srv := s.servers[name]
		recent := time.Since(s.failedAt[name]) < retryAfter
		s.mu.Unlock()
		if srv == nil || (recent && srv.Status().State == mcphost.Failed) {
			continue
		}
		tools, err := srv.Tools(ctx)
		if err != nil {
			s.mu.Lock()
			s.failedAt[name] = time.Now()
			s.mu.Unlock()
			continue
		}
		out = append(out, tools...)
	}
	return out
}

// Call runs server's tool.
func (s *Set) Call(ctx context.Context, server, tool string, args json.RawMessage) mcphost.Result {
	s.mu.Lock()
	srv := s.servers[server]
	s.mu.Unlock()
	if srv == nil {
		return mcphost.Result{Content: fmt.Sprintf("the server %q is not enabled", server), IsError: true}
	}
	return srv.Call(ctx, tool, args)
}

// Approvals are the user's "always allow" choices.
func (s *Set) Approvals() *mcphost.AllowStore { return s.allow }

// List describes every server for Settings → Tools.
func (s *Set) List() []ui.ToolServerInfo {
	s.mu.Lock()
	entries := append([]Entry(nil), s.entries...)
	servers := map[string]*mcphost.Server{}
	for k, v := range s.servers {
		servers[k] = v
	}
	s.mu.Unlock()
	always := s.allow.List()
	var out []ui.ToolServerInfo
	for _, e := range entries {
		info := ui.ToolServerInfo{Name: e.Name, Enabled: e.Enabled, State: "disabled", Always: always[e.Name]}
		info.Setup = e.URL
		if len(e.Command) > 0 {
			info.Setup = commandLine(e.Command)
		}
		if srv := servers[e.Name]; srv != nil {
			st := srv.Status()
			info.State, info.Err, info.Stderr = string(st.State), st.Err, st.Stderr
			for _, t := range st.Tools {
				ti := ui.ToolInfo{Name: t.Name, Description: t.Description}
				if _, err := grammar.Compile(t.InputSchema); err != nil {
					ti.Unchecked = err.Error() // as toolloop.Offer finds it
				}
				info.Tools = append(info.Tools, ti)
			}
		}
		out = append(out, info)
	}
	return out
}

// Add sets up a new server, enabled: a command line (words split as a
// shell would, nothing run through one) with its environment, or a URL.
func (s *Set) Add(name, command string, env map[string]string, url string) error {
	cfg := mcphost.Config{Name: name, Env: env, URL: strings.TrimSpace(url)}
	if strings.TrimSpace(command) != "" {
		words, err := mcphost.SplitCommand(command)
		if err != nil {
			return err
		}
		cfg.Command = words
	}
	if err := cfg.Check(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.entries {
		if e.Name == name {
			return fmt.Errorf("a server is already named %q", name)
		}
	}
	e := Entry{Config: cfg, Enabled: true}
	if err := s.startEntryLocked(e); err != nil {
		return err
	}
	s.entries = append(s.entries, e)
	if err := s.saveLocked(); err != nil {
		s.entries = s.entries[:len(s.entries)-1]
		delete(s.servers, name)
		return err
	}
	return nil
}

// SetEnabled turns a server on or off (off stops it).
func (s *Set) SetEnabled(name string, on bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.entries {
		e := &s.entries[i]
		if e.Name != name {
			continue
		}
		if e.Enabled == on {
			return nil
		}
		e.Enabled = on
		if on {
			if err := s.startEntryLocked(*e); err != nil {
				return err
			}
		} else if srv := s.servers[name]; srv != nil {
			srv.Close()
			delete(s.servers, name)
		}
		delete(s.failedAt, name)
		return s.saveLocked()
	}
	return fmt.Errorf("no server is named %q", name)
}

// Remove stops a server and forgets its setup and approvals.
func (s *Set) Remove(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, e := range s.entries {
		if e.Name != name {
			continue
		}
		if srv := s.servers[name]; srv != nil {
			srv.Close()
			delete(s.servers, name)
		}
		s.entries = append(s.entries[:i], s.entries[i+1:]...)
		for _, t := range s.allow.List()[name] {
			s.allow.Revoke(name, t)
		}
		return s.saveLocked()
	}
	return fmt.Errorf("no server is named %q", name)
}

// Check starts an enabled server now (if it is not running) and lists
// its tools; its state says how it went.
func (s *Set) Check(ctx context.Context, name string) error {
	s.mu.Lock()
	srv := s.servers[name]
	delete(s.failedAt, name)
	s.mu.Unlock()
	if srv == nil {
		return fmt.Errorf("the server %q is not enabled", name)
	}
	_, err := srv.Tools(ctx)
	return err
}

// Revoke forgets "always allow" for server's tool.
func (s *Set) Revoke(server, tool string) error { return s.allow.Revoke(server, tool) }

// Close stops every server.
func (s *Set) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, srv := range s.servers {
		srv.Close()
	}
	return nil
}

// commandLine shows a command's words as one line a shell (and
// mcphost.SplitCommand) reads back the same: words with spaces or quotes
// are single-quoted.
func commandLine(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = w
		if w == "" || strings.ContainsAny(w, " \t\n'\"\\") {
			out[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
	}
	return strings.Join(out, " ")
}
