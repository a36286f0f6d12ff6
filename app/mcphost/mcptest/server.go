// Package mcptest holds MCP servers for tests: a Go server that a test
// binary runs as a child of itself (MaybeServe from TestMain), with tools
// that answer, hang, crash and flood, and the real servers from npm
// (Install).
package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Environment variables of the child: the mode ("ok"; "calm": only echo
// and add; "never": reads and answers nothing; "exit": fails at start) and the file each call is
// logged to (one line per call: the tool's name and arguments).
const (
	EnvMode = "PERCH_MCPTEST_SERVER"
	EnvLog  = "PERCH_MCPTEST_LOG"
)

// Command is the command line that runs this test binary as the server
// in mode, logging calls to log ("" for none).
func Command(mode, log string) ([]string, map[string]string) {
	env := map[string]string{EnvMode: mode}
	if log != "" {
		env[EnvLog] = log
	}
	return []string{os.Args[0], "-test.run=^$"}, env
}

// MaybeServe serves over stdin/stdout and exits when the environment asks
// this process to be the server; otherwise it returns.
func MaybeServe() {
	mode := os.Getenv(EnvMode)
	if mode == "" {
		return
	}
	switch mode {
	case "never":
		fmt.Fprintln(os.Stderr, "mcptest: waiting forever")
		time.Sleep(time.Hour)
	case "exit":
		fmt.Fprintln(os.Stderr, "mcptest: no configuration file found, giving up")
		os.Exit(3)
	}
	err := NewServer(os.Getenv(EnvLog), mode != "calm").Run(context.Background(), &mcp.StdioTransport{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcptest:", err)
	}
	os.Exit(0)
}

// NewServer returns the Go test server: echo {text}, add {a, b}, big {mb}
// (mb MiB of text), hang (never answers), crash (exits mid-call) and half
// {x} (a schema with multipleOf 0.5, which engine/grammar cannot compile);
// without faults, echo, add and half only.
func NewServer(logPath string, faults bool) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "perch-mcptest", Version: "1"}, nil)
	logCall := func(req *mcp.CallToolRequest) {
		if logPath == "" {
			return
		}
		f, err := os.OpenFile(logPath, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintf(f, "%s %s\n", req.Params.Name, req.Params.Arguments)
			f.Close()
		}
	}
	add := func(name, desc, schema string, h func(args map[string]any) (string, bool)) {
		s.AddTool(&mcp.Tool{Name: name, Description: desc, InputSchema: json.RawMessage(schema)},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				logCall(req)
				var args map[string]any
				json.Unmarshal(req.Params.Arguments, &args)
				text, isErr := h(args)
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: isErr}, nil
			})
	}
	add("echo", "Repeats the text it is given.",
		`{"type":"object","properties":{"text":{"type":"string","maxLength":40}},"required":["text"],"additionalProperties":false}`,
		func(a map[string]any) (string, bool) { return fmt.Sprintf("echo: %v", a["text"]), false })
	add("add", "Adds two integers.",
		`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"],"additionalProperties":false}`,
		func(a map[string]any) (string, bool) {
			x, ok1 := a["a"].(float64)
			y, ok2 := a["b"].(float64)
			if !ok1 || !ok2 {
				return "a and b must be numbers", true
			}
			return fmt.Sprint(x + y), false
		})
	add("half", "Takes a multiple of one half.",
		`{"type":"object","properties":{"x":{"type":"number","multipleOf":0.5}},"required":["x"]}`,
		func(a map[string]any) (string, bool) { return fmt.Sprint(a["x"]), false })
	if !faults {
		return s
	}
	add("big", "Returns mb MiB of text.", `{"type":"object","properties":{"mb":{"type":"integer"}}}`,
		func(a map[string]any) (string, bool) {
			mb, _ := a["mb"].(float64)
			return strings.Repeat("x", int(mb)<<20), false
		})
	add("hang", "Never answers.", `{"type":"object"}`, func(map[string]any) (string, bool) {
		time.Sleep(time.Hour)
		return "", true
	})
	add("crash", "Exits in the middle of the call.", `{"type":"object"}`, func(map[string]any) (string, bool) {
		fmt.Fprintln(os.Stderr, "mcptest: crashing on purpose")
		os.Exit(2)
		return "", true
	})
	return s
}
