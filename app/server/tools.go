package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"perch/engine"
)

// maxResponseSchema caps response_format's schema (the grammar compiler's
// own limits apply after this one).
const maxResponseSchema = 256 << 10

// toolDef is one entry of OpenAI's tools.
type toolDef struct {
	Type     string `json:"type"`
	Function *struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
		Strict      *bool           `json:"strict"`
	} `json:"function"`
}

// responseFormat is OpenAI's response_format.
type responseFormat struct {
	Type       string `json:"type"`
	JSONSchema *struct {
		Name   string          `json:"name"`
		Schema json.RawMessage `json:"schema"`
		Strict *bool           `json:"strict"`
	} `json:"json_schema"`
}

// wireToolCall is a tool call as OpenAI writes it in assistant messages.
type wireToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name string `json:"name"`
		// Arguments is a JSON string holding the arguments' JSON text (some
		// clients send the object itself).
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

// readTools fills the request's tools, tool choice, parallel calls and
// response schema; every limit is checked before any of it is used.
func (c *chatCall) readTools(cr *chatRequest) error {
	if len(cr.Tools) > engine.MaxTools {
		return badParam("tools", "%d tools; the limit is %d", len(cr.Tools), engine.MaxTools)
	}
	for i, t := range cr.Tools {
		param := fmt.Sprintf("tools[%d]", i)
		if t.Type != "function" || t.Function == nil {
			return badParam(param, "only tools of type \"function\" with a function object are supported")
		}
		if len(t.Function.Parameters) > engine.MaxToolSchemaSize {
			return badParam(param+".function.parameters", "the schema is %d bytes; the limit is %d", len(t.Function.Parameters), engine.MaxToolSchemaSize)
		}
		c.req.Tools = append(c.req.Tools, engine.Tool{Name: t.Function.Name, Description: t.Function.Description,
			Parameters: t.Function.Parameters, Strict: t.Function.Strict != nil && *t.Function.Strict})
	}
	choice, err := readToolChoice(cr.ToolChoice)
	if err != nil {
		return err
	}
	c.req.ToolChoice = choice
	c.req.ParallelToolCalls = cr.ParallelToolCalls
	if err := engine.CheckTools(c.req.Tools, c.req.ToolChoice); err != nil {
		return badParam("tools", "%v", err)
	}
	if f := cr.ResponseFormat; f != nil {
		switch f.Type {
		case "", "text":
		case "json_object":
			c.req.ResponseSchema = []byte(`{"type":"object"}`)
		case "json_schema":
			if f.JSONSchema == nil || len(bytes.TrimSpace(f.JSONSchema.Schema)) == 0 {
				return badParam("response_format.json_schema.schema", "json_schema needs a schema")
			}
			if len(f.JSONSchema.Schema) > maxResponseSchema {
				return badParam("response_format.json_schema.schema", "the schema is %d bytes; the limit is %d", len(f.JSONSchema.Schema), maxResponseSchema)
			}
			c.req.ResponseSchema = f.JSONSchema.Schema
		default:
			return badParam("response_format.type", "response_format type %q is not one of text, json_object, json_schema", truncate(f.Type, 40))
		}
	}
	return nil
}

// readToolChoice reads "auto", "none", "required" or {"type": "function",
// "function": {"name": …}}.
func readToolChoice(raw json.RawMessage) (engine.ToolChoice, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return engine.ToolChoice{}, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		switch s {
		case "auto":
			return engine.ToolChoice{Mode: engine.ToolAuto}, nil
		case "none":
			return engine.ToolChoice{Mode: engine.ToolNone}, nil
		case "required":
			return engine.ToolChoice{Mode: engine.ToolRequired}, nil
		}
		return engine.ToolChoice{}, badParam("tool_choice", "tool_choice %q is not one of auto, none, required", truncate(s, 40))
	}
	var named struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &named); err != nil || named.Type != "function" || named.Function.Name == "" {
		return engine.ToolChoice{}, badParam("tool_choice", `tool_choice must be "auto", "none", "required" or {"type": "function", "function": {"name": …}}`)
	}
	return engine.ToolChoice{Mode: engine.ToolFunction, Name: named.Function.Name}, nil
}

// readToolCalls converts an assistant message's tool_calls; arguments must
// be a JSON object (sent as JSON text, as OpenAI does, or as the object).
func readToolCalls(param string, calls []wireToolCall) ([]engine.ToolCall, error) {
	var out []engine.ToolCall
	for i, tc := range calls {
		p := fmt.Sprintf("%s.tool_calls[%d]", param, i)
		if tc.Function.Name == "" {
			return nil, badParam(p+".function.name", "a tool call needs a function name")
		}
		args := bytes.TrimSpace(tc.Function.Arguments)
		var text string
		if json.Unmarshal(args, &text) == nil {
			args = bytes.TrimSpace([]byte(text))
		}
		if len(args) == 0 {
			args = []byte("{}")
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(args, &obj); err != nil || obj == nil {
			return nil, badParam(p+".function.arguments", "arguments must be a JSON object")
		}
		out = append(out, engine.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: args})
	}
	return out, nil
}

// wireCalls are the calls of an answer as OpenAI's message.tool_calls; a
// call that did not parse keeps its text as the arguments, so the client's
// JSON parse fails loudly (and runTools-style loops tell the model).
func wireCalls(calls []engine.ParsedCall) []map[string]any {
	var out []map[string]any
	for _, c := range calls {
		args := string(c.Arguments)
		if c.Err != nil {
			args = c.Raw
		}
		out = append(out, map[string]any{"id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": args}})
	}
	return out
}

// argumentPiece is the most bytes of arguments one streamed chunk carries.
const argumentPiece = 48

// toolCall streams one call as OpenAI does: a chunk with the index, id,
// type, name and empty arguments, then the arguments in pieces (cut
// between characters), which clients append to one another.
func (s *sse) toolCall(index int, c engine.ParsedCall) {
	first := wireCalls([]engine.ParsedCall{c})[0]
	args := first["function"].(map[string]any)["arguments"].(string)
	first["index"] = index
	first["function"] = map[string]any{"name": c.Name, "arguments": ""}
	s.toolDelta(first)
	for args != "" {
		n := min(len(args), argumentPiece)
		for n < len(args) && !utf8.RuneStart(args[n]) {
			n++
		}
		s.toolDelta(map[string]any{"index": index, "function": map[string]any{"arguments": args[:n]}})
		args = args[n:]
	}
}

func (s *sse) toolDelta(call map[string]any) {
	b, _ := json.Marshal(map[string]any{"tool_calls": []any{call}})
	out := append(append(append(s.buf[:0], s.prefix...), b...), s.open...)
	s.buf = out
	s.send(out)
}
