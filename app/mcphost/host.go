package mcphost

import (
	"context"
	"encoding/json"
	"fmt"
)

// Host is the user's servers, by name. Nothing starts until a server's
// tools are first asked for.
type Host struct {
	servers []*Server
	byName  map[string]*Server
}

// NewHost checks the configs and ends servers a killed Perch left behind
// (pidDir "": no pid files).
func NewHost(cfgs []Config, pidDir string) (*Host, error) {
	h := &Host{byName: map[string]*Server{}}
	if pidDir != "" {
		ReapLeftovers(pidDir)
	}
	for _, c := range cfgs {
		if h.byName[c.Name] != nil {
			return nil, fmt.Errorf("two servers are named %q", c.Name)
		}
		s, err := NewServer(c, pidDir)
		if err != nil {
			return nil, err
		}
		h.servers = append(h.servers, s)
		h.byName[c.Name] = s
	}
	return h, nil
}

// Tools starts every server and lists their tools; a server that fails
// leaves its tools out and is reported in errs (its Status says why).
func (h *Host) Tools(ctx context.Context) (tools []Tool, errs []error) {
	for _, s := range h.servers {
		ts, err := s.Tools(ctx)
		if err != nil {
			errs = append(errs, fmt.Errorf("server %s: %w", s.Name(), err))
			continue
		}
		tools = append(tools, ts...)
	}
	return tools, errs
}

// Call runs server's tool.
func (h *Host) Call(ctx context.Context, server, tool string, args json.RawMessage) Result {
	s := h.byName[server]
	if s == nil {
		return Result{Content: fmt.Sprintf("no server named %q", server), IsError: true}
	}
	return s.Call(ctx, tool, args)
}

// Statuses reports every server's state, in configuration order.
func (h *Host) Statuses() []Status {
	out := make([]Status, len(h.servers))
	for i, s := range h.servers {
		out[i] = s.Status()
	}
	return out
}

// Close stops every server.
func (h *Host) Close() error {
	for _, s := range h.servers {
		s.Close()
	}
	return nil
}
