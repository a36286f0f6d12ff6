package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"perch/engine"
	"perch/engine/grammar"
	"perch/engine/regfile"
	"perch/engine/toolcall"
)

// maxParseInput bounds what perch tools parse reads from stdin.
const maxParseInput = 16 << 20

func init() {
	Register("tools", "tool-call helpers: perch tools parse < model-output.txt", func(args []string) int {
		return runTools(args, os.Stdin, os.Stdout, os.Stderr)
	})
}

func runTools(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "parse" || len(args) > 1 {
		fmt.Fprintln(stderr, "usage: perch tools parse < output.txt   (a model's raw output on stdin; prints {\"content\", \"thinking\", \"tool_calls\"})")
		return 2
	}
	data, err := io.ReadAll(io.LimitReader(stdin, maxParseInput+1))
	if err != nil {
		fmt.Fprintln(stderr, "perch tools parse:", err)
		return 1
	}
	if len(data) > maxParseInput {
		fmt.Fprintf(stderr, "perch tools parse: the input is over the %d MiB limit\n", maxParseInput>>20)
		return 1
	}
	b, _ := json.Marshal(parseOutput(string(data)))
	fmt.Fprintf(stdout, "%s\n", b)
	return 0
}

// parsedOutput is what perch tools parse prints.
type parsedOutput struct {
	Content   string       `json:"content"`
	Thinking  string       `json:"thinking"`
	ToolCalls []parsedCall `json:"tool_calls"`
}

type parsedCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Error     string          `json:"error,omitempty"`
	Raw       string          `json:"raw,omitempty"` // a call that did not parse, as written
}

func parseOutput(text string) parsedOutput {
	p := &toolcall.Parser{}
	out := parsedOutput{ToolCalls: []parsedCall{}}
	var content, thinking strings.Builder
	for _, ev := range append(p.Write(text), p.Close()...) {
		switch ev.Kind {
		case toolcall.Text:
			content.WriteString(ev.Text)
		case toolcall.Thinking:
			thinking.WriteString(ev.Text)
		case toolcall.ToolCall:
			out.ToolCalls = append(out.ToolCalls, wireCall(ev.Call))
		}
	}
	out.Content, out.Thinking = content.String(), thinking.String()
	return out
}

func wireCall(c engine.ParsedCall) parsedCall {
	if c.Err != nil {
		return parsedCall{Name: c.Name, Error: c.Err.Error(), Raw: c.Raw}
	}
	return parsedCall{Name: c.Name, Arguments: c.Arguments}
}

// toolFlags are ask's and chat's --tools and --tool-choice.
type toolFlags struct {
	file, choice, schema string
}

func (t *toolFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&t.file, "tools", "", "a JSON file holding an array of OpenAI tool definitions the model may call")
	fs.StringVar(&t.choice, "tool-choice", "", "auto, none, required, or the name of the function to call (needs --tools)")
	fs.StringVar(&t.schema, "json-schema", "", "a JSON Schema file: the answer is JSON that follows it (constrained decoding)")
}

// apply reads the schema and tool files into req.
func (t *toolFlags) apply(req *engine.Request) error {
	if t.schema != "" {
		data, err := regfile.ReadFile(t.schema, grammar.MaxSchemaBytes)
		if err != nil {
			return fmt.Errorf("--json-schema: %w", err)
		}
		if !json.Valid(data) {
			return fmt.Errorf("--json-schema: %s is not JSON", t.schema)
		}
		req.ResponseSchema = data
	}
	if t.file == "" {
		if t.choice != "" {
			return fmt.Errorf("--tool-choice needs --tools")
		}
		return nil
	}
	data, err := regfile.ReadFile(t.file, engine.MaxToolsSize+64<<10)
	if err != nil {
		return fmt.Errorf("--tools: %w", err)
	}
	var defs []struct {
		Type     string `json:"type"`
		Function *struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
			Strict      bool            `json:"strict"`
		} `json:"function"`
	}
	if err := json.Unmarshal(data, &defs); err != nil {
		return fmt.Errorf("--tools: %s is not a JSON array of tool definitions: %v", t.file, err)
	}
	for i, d := range defs {
		if d.Type != "function" || d.Function == nil {
			return fmt.Errorf("--tools: tool %d is not {\"type\": \"function\", \"function\": {…}}", i)
		}
		req.Tools = append(req.Tools, engine.Tool{Name: d.Function.Name, Description: d.Function.Description,
			Parameters: d.Function.Parameters, Strict: d.Function.Strict})
	}
	switch t.choice {
	case "", "auto":
	case "none":
		req.ToolChoice.Mode = engine.ToolNone
	case "required":
		req.ToolChoice.Mode = engine.ToolRequired
	default:
		req.ToolChoice = engine.ToolChoice{Mode: engine.ToolFunction, Name: t.choice}
	}
	if err := engine.CheckTools(req.Tools, req.ToolChoice); err != nil {
		return fmt.Errorf("--tools: %w", err)
	}
	return nil
}

// toolCall prints a call the model made: a line of its own in text mode,
// a JSON line with --json.
func (o *askOutput) toolCall(c engine.ParsedCall) {
	w := wireCall(c)
	if o.json {
		o.emit(map[string]any{"type": "tool_call", "id": c.ID, "name": w.Name, "arguments": w.Arguments, "error": w.Error, "raw": w.Raw})
		return
	}
	if c.Err != nil {
		fmt.Fprintf(o.w, "\n[tool call %s did not parse: %v] %s\n", c.Name, c.Err, c.Raw)
		return
	}
	fmt.Fprintf(o.w, "\n[tool call] %s %s\n", c.Name, c.Arguments)
}
