package mcphost

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"perch/internal/durable"
	"sort"
	"sync"
)

// Policy says which calls run without asking.
type Policy string

const (
	Ask      Policy = "ask"  // ask for each call, unless the user always allows that tool
	AllowAll Policy = "all"  // run every call (the user chose so for this run)
	DenyAll  Policy = "none" // run nothing
)

// ParsePolicy reads --approve's value.
func ParsePolicy(s string) (Policy, error) {
	switch p := Policy(s); p {
	case Ask, AllowAll, DenyAll:
		return p, nil
	}
	return "", fmt.Errorf("approval %q is not one of ask, all, none", s)
}

// Decision is the user's answer to one call.
type Decision int

const (
	Deny        Decision = iota
	AllowOnce            // this call
	AllowAlways          // this call and every later one of this server's tool
)

// Request is a call waiting for approval.
type Request struct {
	Server, Tool string
	Arguments    json.RawMessage
}

// AskFunc puts a call before the user (a terminal prompt, a chat card).
type AskFunc func(ctx context.Context, r Request) (Decision, error)

// Gate decides each call: the policy first, then the user's stored
// "always" choices, then the user.
type Gate struct {
	Policy Policy
	Store  *AllowStore // nil: nothing is remembered
	Ask    AskFunc     // nil under Ask: every call is denied
}

// Approve reports whether the call may run.
func (g *Gate) Approve(ctx context.Context, r Request) (bool, error) {
	switch g.Policy {
	case AllowAll:
		return true, nil
	case DenyAll:
		return false, nil
	}
	if g.Store != nil && g.Store.Allowed(r.Server, r.Tool) {
		return true, nil
	}
	if g.Ask == nil {
		return false, nil
	}
	d, err := g.Ask(ctx, r)
	if err != nil {
		return false, err
	}
	if d == AllowAlways && g.Store != nil {
		if err := g.Store.Allow(r.Server, r.Tool); err != nil {
			return true, fmt.Errorf("allowed once; remembering it failed: %w", err)
		}
	}
	return d != Deny, nil
}

// AllowStore is the user's "always allow" choices, per server and tool,
// kept in a small JSON file written whole through a synced temporary file
// and a rename (a crash leaves the old file or the new one).
type AllowStore struct {
	path string
	mu   sync.Mutex
	m    map[string]map[string]bool // server -> tool -> allowed
}

// OpenAllowStore reads path (a missing file is an empty store); path ""
// keeps the choices in memory only (perch ask: for the run).
func OpenAllowStore(path string) (*AllowStore, error) {
	s := &AllowStore{path: path, m: map[string]map[string]bool{}}
	if path == "" {
		return s, nil
	}
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	var f struct {
		Always map[string][]string `json:"always"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s is not an approvals file: %v", path, err)
	}
	for srv, tools := range f.Always {
		for _, t := range tools {
			s.set(srv, t, true)
		}
	}
	return s, nil
}

func (s *AllowStore) set(server, tool string, on bool) {
	if on {
		if s.m[server] == nil {
			s.m[server] = map[string]bool{}
		}
		s.m[server][tool] = true
		return
	}
	delete(s.m[server], tool)
	if len(s.m[server]) == 0 {
		delete(s.m, server)
	}
}

// Allowed reports whether the user always allows server's tool.
func (s *AllowStore) Allowed(server, tool string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[server][tool]
}

// Allow remembers "always allow" for server's tool.
func (s *AllowStore) Allow(server, tool string) error { return s.change(server, tool, true) }

// Revoke forgets it: the tool asks again.
func (s *AllowStore) Revoke(server, tool string) error { return s.change(server, tool, false) }

// List returns the always-allowed tools per server, sorted.
func (s *AllowStore) List() map[string][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string][]string{}
	for srv, tools := range s.m {
		for t := range tools {
			out[srv] = append(out[srv], t)
		}
		sort.Strings(out[srv])
	}
	return out
}

func (s *AllowStore) change(server, tool string, on bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.m[server][tool]
	s.set(server, tool, on)
	if err := s.saveLocked(); err != nil {
		s.set(server, tool, old)
		return err
	}
	return nil
}

func (s *AllowStore) saveLocked() error {
	if s.path == "" {
		return nil
	}
	f := struct {
		Always map[string][]string `json:"always"`
	}{map[string][]string{}}
	for srv, tools := range s.m {
		for t := range tools {
			f.Always[srv] = append(f.Always[srv], t)
		}
		sort.Strings(f.Always[srv])
	}
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return err
	}
	return durable.WriteFile(s.path, append(data, '\n'), 0o700)
}
