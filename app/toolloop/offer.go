// Package toolloop runs a conversation turn in which the model may call
// MCP tools: it offers the servers' tools to the model, asks the user's
// approval for each call the model makes, runs the allowed ones, hands the
// results (or the error, or "denied") back as tool turns and lets the
// model go on, for at most a number of rounds. It knows no window: the
// CLI and the chat give it their approver and show its events.
package toolloop

import (
	"fmt"
	"regexp"
	"strings"

	"perch/app/mcphost"
	"perch/engine"
	"perch/engine/grammar"
)

// Offered is an MCP tool as the model sees it: Engine.Name is unique
// among the offered tools (the tool's own name, or server_name when two
// servers share a name).
type Offered struct {
	Server, Tool string
	Engine       engine.Tool
}

// Skipped is a tool left out, and why.
type Skipped struct {
	Server, Tool, Reason string
}

var nameChars = regexp.MustCompile(`[^A-Za-z0-9_.:\-]`)

// Offer turns the servers' tools into the model's. When constrained (the
// request's tool choice is required or a function, so engine/grammar will
// compile every offered schema), a tool whose schema the grammar cannot
// compile is left out with the grammar's reason: offering it would fail
// the whole request, and a small model's unconstrained arguments to it
// would rarely be valid. Tools the engine refuses (schema not an object,
// over its limits) are left out too, with the engine's reason.
func Offer(tools []mcphost.Tool, constrained bool) ([]Offered, []Skipped) {
	var out []Offered
	var skipped []Skipped
	taken := map[string]bool{}
	for _, t := range tools {
		skip := func(format string, a ...any) {
			skipped = append(skipped, Skipped{Server: t.Server, Tool: t.Name, Reason: fmt.Sprintf(format, a...)})
		}
		name := t.Name
		if !validName(name) || taken[name] {
			name = nameChars.ReplaceAllString(t.Server+"_"+t.Name, "_")
		}
		if !validName(name) || taken[name] {
			skip("its name %q cannot be given to the model (letters, digits, _ . : - and at most 64)", t.Name)
			continue
		}
		et := engine.Tool{Name: name, Description: t.Description, Parameters: t.InputSchema}
		if err := engine.CheckTools([]engine.Tool{et}, engine.ToolChoice{}); err != nil {
			skip("%v", err)
			continue
		}
		if constrained {
			if _, err := grammar.Compile(t.InputSchema); err != nil {
				skip("its argument schema cannot be enforced: %v", err)
				continue
			}
		}
		taken[name] = true
		out = append(out, Offered{Server: t.Server, Tool: t.Name, Engine: et})
	}
	if len(out) > engine.MaxTools {
		for _, o := range out[engine.MaxTools:] {
			skipped = append(skipped, Skipped{Server: o.Server, Tool: o.Tool, Reason: fmt.Sprintf("over the limit of %d tools", engine.MaxTools)})
		}
		out = out[:engine.MaxTools]
	}
	return out, skipped
}

func validName(s string) bool {
	return len(s) > 0 && len(s) <= 64 && !nameChars.MatchString(s) && !strings.ContainsAny(s, " ")
}
