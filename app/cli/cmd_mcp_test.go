package cli

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"perch/app/mcphost/mcptest"
	"perch/engine/grammar"
)

func TestMain(m *testing.M) {
	mcptest.MaybeServe()
	if args := os.Getenv("PERCH_TEST_ASK_ARGS"); args != "" {
		// a perch ask of its own, for TestKill9AskMidCall
		var list []string
		json.Unmarshal([]byte(args), &list)
		os.Exit(runAsk(list, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// loopLine is one --json line of perch ask --mcp.
type loopLine struct {
	Type      string          `json:"type"`
	Name      string          `json:"name"`
	Server    string          `json:"server"`
	Arguments json.RawMessage `json:"arguments"`
	Content   string          `json:"content"`
	IsError   bool            `json:"is_error"`
	Denied    bool            `json:"denied"`
	Text      string          `json:"text"`
	Reason    string          `json:"reason"`
	Message   string          `json:"message"`
	Error     string          `json:"error"`
	Stderr    string          `json:"stderr"`
}

// askMCP runs perch ask --mcp on the tiny model and returns its lines.
func askMCP(t *testing.T, extra ...string) ([]loopLine, string) {
	t.Helper()
	t.Setenv("PERCH_DATA_DIR", t.TempDir())
	args := append([]string{"--model", tinyModel, "--backend", "go", "--temperature", "0", "--max-tokens", "24", "--json"}, extra...)
	var out, errb bytes.Buffer
	code := runAsk(append(args, "Use a tool, then answer."), &out, &errb)
	var lines []loopLine
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var v loopLine
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		lines = append(lines, v)
	}
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, out.String(), errb.String())
	}
	return lines, errb.String()
}

// goMCP is the --mcp command line of the Go test server in mode.
func goMCP(mode, log string) string {
	argv, env := mcptest.Command(mode, log)
	line := ""
	for k, v := range env {
		line += k + "='" + v + "' "
	}
	return line + "'" + strings.Join(argv, "' '") + "'"
}

// schemaOf is the input schema the server lists for tool.
func checkArgs(t *testing.T, schema string, args json.RawMessage) {
	t.Helper()
	g, err := grammar.Compile([]byte(schema))
	if err != nil {
		t.Fatal(err)
	}
	if !g.Validate(args) {
		t.Errorf("arguments %s do not validate against %s", args, schema)
	}
}

var goSchemas = map[string]string{
	"echo": `{"type":"object","properties":{"text":{"type":"string","maxLength":40}},"required":["text"],"additionalProperties":false}`,
	"add":  `{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"],"additionalProperties":false}`,
}

// TestAskMCPApproveAll: with --tool-choice required the tiny model calls
// one of the Go server's tools with arguments valid for its schema, the
// server runs it (its log has the call), the result goes back and an
// answer follows; the tool whose schema the grammar cannot compile is left
// out with the reason.
func TestAskMCPApproveAll(t *testing.T) {
	log := filepath.Join(t.TempDir(), "calls.log")
	lines, _ := askMCP(t, "--mcp", goMCP("calm", log), "--approve", "all", "--tool-choice", "required")
	var call, result *loopLine
	var skipped []string
	answerAfter := false
	for i := range lines {
		l := &lines[i]
		switch l.Type {
		case "tool_call":
			if call == nil {
				call = l
			}
		case "tool_result":
			if result == nil {
				result = l
			}
		case "tool_skipped":
			skipped = append(skipped, l.Name+": "+l.Reason)
		case "done":
			answerAfter = result != nil
		}
	}
	if call == nil || result == nil || !answerAfter {
		t.Fatalf("want a call, its result and an answer; got %+v", lines)
	}
	checkArgs(t, goSchemas[call.Name], call.Arguments)
	if result.IsError || result.Denied || result.Name != call.Name {
		t.Fatalf("result %+v", result)
	}
	data, _ := os.ReadFile(log)
	if !strings.HasPrefix(string(data), call.Name+" ") {
		t.Fatalf("the server's log %q lacks the call to %s", data, call.Name)
	}
	if len(skipped) != 1 || !strings.Contains(skipped[0], "half: ") || !strings.Contains(skipped[0], "multipleOf") {
		t.Fatalf("skipped %q, want half with its reason", skipped)
	}
}

// TestAskMCPApproveNone: the model calls, nothing runs (the server's log
// stays empty), the model is told "denied" and answers.
func TestAskMCPApproveNone(t *testing.T) {
	log := filepath.Join(t.TempDir(), "calls.log")
	lines, _ := askMCP(t, "--mcp", goMCP("calm", log), "--approve", "none", "--tool-choice", "required")
	denied := 0
	for _, l := range lines {
		if l.Type == "tool_result" {
			if !l.Denied || !strings.HasPrefix(l.Content, "denied") {
				t.Fatalf("result %+v", l)
			}
			denied++
		}
	}
	if denied == 0 {
		t.Fatalf("no call was made: %+v", lines)
	}
	if data, err := os.ReadFile(log); err == nil || len(data) > 0 {
		t.Fatalf("the server ran calls under --approve none: %q", data)
	}
}

// TestAskMCPApproveAsk: y, then always (no further question), on stdin.
func TestAskMCPApproveAsk(t *testing.T) {
	log := filepath.Join(t.TempDir(), "calls.log")
	mcpStdin = strings.NewReader("no\n")
	defer func() { mcpStdin = os.Stdin }()
	lines, stderr := askMCP(t, "--mcp", goMCP("calm", log), "--approve", "ask", "--tool-choice", "required", "--max-rounds", "1")
	if !strings.Contains(stderr, "Allow ") || !strings.Contains(stderr, "[y/N/always]") {
		t.Fatalf("no question on stderr: %q", stderr)
	}
	for _, l := range lines {
		if l.Type == "tool_result" && !l.Denied {
			t.Fatalf("answered no, the call ran: %+v", l)
		}
	}
	mcpStdin = strings.NewReader("always\n")
	lines, stderr = askMCP(t, "--mcp", goMCP("calm", log), "--approve", "ask", "--tool-choice", "required", "--max-rounds", "1")
	ran := 0
	for _, l := range lines {
		if l.Type == "tool_result" && !l.Denied {
			ran++
		}
	}
	if ran == 0 || strings.Count(stderr, "Allow ") != 1 {
		t.Fatalf("always: %d ran, asked %d times", ran, strings.Count(stderr, "Allow "))
	}
}

// TestAskMCPServerFails: a server that exits at start is one line with
// its own last words; the answer still comes.
func TestAskMCPServerFails(t *testing.T) {
	lines, _ := askMCP(t, "--mcp", goMCP("exit", ""), "--approve", "all")
	var failed *loopLine
	for i := range lines {
		if lines[i].Type == "server_error" {
			failed = &lines[i]
		}
	}
	if failed == nil || lines[len(lines)-1].Type != "done" {
		t.Fatalf("lines %+v", lines)
	}
	if !strings.Contains(failed.Error, "server mcp1: the server exited") || !strings.Contains(failed.Stderr, "no configuration file found") {
		t.Fatalf("server_error %+v", failed)
	}
}

// TestAskMCPOverHTTP: --mcp takes a streamable-HTTP URL on this machine
// and refuses one elsewhere before the model loads.
func TestAskMCPOverHTTP(t *testing.T) {
	log := filepath.Join(t.TempDir(), "calls.log")
	srv := mcptest.NewServer(log, false)
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer ts.Close()
	lines, _ := askMCP(t, "--mcp", ts.URL, "--approve", "all", "--tool-choice", "required")
	if call, result, answered := firstCall(lines); call == nil || result == nil || result.IsError || !answered {
		t.Fatalf("over HTTP: %+v", lines)
	}
	if data, _ := os.ReadFile(log); len(data) == 0 {
		t.Fatal("the HTTP server logged no call")
	}
	var out, errb bytes.Buffer
	t.Setenv("PERCH_DATA_DIR", t.TempDir())
	if code := runAsk([]string{"--model", "/no/such/model", "--mcp", "http://192.0.2.1/mcp", "hi"}, &out, &errb); code != 1 ||
		!strings.Contains(errb.String(), "not on this machine") {
		t.Fatalf("a remote URL: exit %d, %q", code, errb.String())
	}
}
