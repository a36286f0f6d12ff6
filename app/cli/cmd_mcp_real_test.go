package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"perch/app/mcphost"
	"perch/app/mcphost/mcptest"
)

// realMCP is the --mcp line of a real server with its method log.
func realMCP(argv []string, log string) string {
	argv, env := mcptest.Logged(argv, log)
	return "PERCH_MCPTEST_LOG='" + env["PERCH_MCPTEST_LOG"] + "' '" + strings.Join(argv, "' '") + "'"
}

// schemas lists a server's tools' input schemas.
func schemas(t *testing.T, argv []string) map[string]string {
	h, err := mcphost.NewHost([]mcphost.Config{{Name: "s", Command: argv}}, "")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	tools, errs := h.Tools(context.Background())
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	out := map[string]string{}
	for _, tl := range tools {
		out[tl.Name] = string(tl.InputSchema)
	}
	return out
}

// firstCall returns the first call, its result, and whether an answer's
// done line came after the result.
func firstCall(lines []loopLine) (call, result *loopLine, answered bool) {
	for i := range lines {
		switch l := &lines[i]; l.Type {
		case "tool_call":
			if call == nil && l.Server != "" {
				call = l
			}
		case "tool_result":
			if result == nil && call != nil && l.Name == call.Name {
				result = l
			}
		case "done":
			answered = result != nil
		}
	}
	return call, result, answered
}

// TestAskMCPRealServers: perch ask --mcp with server-everything and
// server-filesystem from npm, on the tiny model (server-everything with
// --tool-choice required). --approve all: the call's arguments validate against the
// tool's schema, the server receives tools/call (its own log), the result
// goes back and an answer follows. --approve none: the server receives
// initialize and tools/list but never tools/call, and the folder is
// untouched.
func TestAskMCPRealServers(t *testing.T) {
	srv := mcptest.Install(t)
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "notes.txt"), []byte("perch was here"), 0o644)
	cases := []struct {
		name     string
		argv     []string
		sampling []string
	}{
		{"everything", srv.Everything, []string{"--tool-choice", "required", "--max-tokens", "400"}},
		// Every server-filesystem tool but one takes a path string, and
		// this random tiny model's strings do not close within its
		// context (3,900 of its 4,096 tokens go to the tools): the call is
		// the one without arguments.
		{"filesystem", append(srv.Filesystem, root), []string{"--tool-choice", "list_allowed_directories", "--max-tokens", "120"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			schema := schemas(t, c.argv)
			log := filepath.Join(t.TempDir(), "methods.log")
			lines, _ := askMCP(t, append([]string{"--mcp", realMCP(c.argv, log), "--approve", "all"}, c.sampling...)...)
			call, result, answered := firstCall(lines)
			if call == nil || result == nil || !answered || result.Denied {
				t.Fatalf("want a call, its result and an answer: %+v", lines)
			}
			checkArgs(t, schema[call.Name], call.Arguments)
			methods, _ := os.ReadFile(log)
			if !strings.Contains(string(methods), "tools/call "+call.Name+"\n") {
				t.Fatalf("the server's log %q lacks tools/call %s", methods, call.Name)
			}
			t.Logf("called %s %s: error %v, %.120q", call.Name, call.Arguments, result.IsError, result.Content)

			log = filepath.Join(t.TempDir(), "methods.log")
			lines, _ = askMCP(t, append([]string{"--mcp", realMCP(c.argv, log), "--approve", "none"}, c.sampling...)...)
			call, result, answered = firstCall(lines)
			if call == nil || result == nil || !result.Denied || !answered {
				t.Fatalf("--approve none: want a denied call and an answer: %+v", lines)
			}
			methods, _ = os.ReadFile(log)
			if !strings.Contains(string(methods), "tools/list") || strings.Contains(string(methods), "tools/call") {
				t.Fatalf("--approve none: the server's log %q", methods)
			}
			entries, _ := os.ReadDir(root)
			data, _ := os.ReadFile(filepath.Join(root, "notes.txt"))
			if len(entries) != 1 || string(data) != "perch was here" {
				t.Fatalf("the folder changed: %d entries, notes %q", len(entries), data)
			}
		})
	}
}
