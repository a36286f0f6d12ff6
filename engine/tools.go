package engine

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"

	"perch/engine/toolcall"
)

// Limits on a request's tools, checked before anything is rendered.
const (
	MaxTools          = 128       // tool definitions in one request
	MaxToolSchemaSize = 256 << 10 // bytes of one tool's parameters
	MaxToolsSize      = 1 << 20   // bytes of all tools' names, descriptions and parameters
	maxSchemaDepth    = 64        // nesting of a parameters schema
)

// toolName is what a function name may be: OpenAI's rule (letters, digits,
// _ and -, at most 64), which also keeps the name out of the call syntax.
var toolName = regexp.MustCompile(`^[A-Za-z0-9_.:\-]{1,64}$`)

// ToolError refuses a request's tools (the API answers it with a 400).
type ToolError struct{ Msg string }

func (e *ToolError) Error() string { return e.Msg }

func toolErrorf(format string, a ...any) error { return &ToolError{Msg: fmt.Sprintf(format, a...)} }

// suppressed are the token ids the request never samples: the
// generation_config's, and <|tool_call> under tool_choice none (the tools
// are shown, no call is made).
func (e *Engine) suppressed(req Request) []int32 {
	ids := e.gen.SuppressTokens
	if len(req.Tools) > 0 && req.ToolChoice.Mode == ToolNone {
		if id, ok := e.tok.TokenID(toolcall.CallOpen); ok {
			ids = append(slices.Clip(ids), id)
		}
	}
	return ids
}

// CheckTools refuses tools and a tool choice that Generate would refuse
// (limits, names, schemas that are not JSON objects), without a model.
func CheckTools(tools []Tool, choice ToolChoice) error {
	_, err := templateTools(tools, choice)
	return err
}

// templateTools checks the request's tools and turns them into the OpenAI
// function objects the chat template declares, each schema normalised to
// what Gemma-4's template reads: every schema gets a "type" (a template
// upper-cases it and a missing one renders as an empty type), a type list
// such as ["string", "null"] becomes its first non-null type plus
// "nullable": true.
func templateTools(tools []Tool, choice ToolChoice) ([]json.RawMessage, error) {
	if len(tools) > MaxTools {
		return nil, toolErrorf("%d tools given; at most %d are allowed", len(tools), MaxTools)
	}
	total := 0
	seen := map[string]bool{}
	for i, t := range tools {
		if !toolName.MatchString(t.Name) {
			return nil, toolErrorf("tool %d: name %q must be 1-64 letters, digits, '_', '.', ':' or '-'", i, t.Name)
		}
		if seen[t.Name] {
			return nil, toolErrorf("tool %d: the name %q is used twice", i, t.Name)
		}
		seen[t.Name] = true
		if len(t.Parameters) > MaxToolSchemaSize {
			return nil, toolErrorf("tool %s: parameters schema is %d bytes; at most %d are allowed", t.Name, len(t.Parameters), MaxToolSchemaSize)
		}
		total += len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	if total > MaxToolsSize {
		return nil, toolErrorf("the tools are %d bytes; at most %d are allowed", total, MaxToolsSize)
	}
	switch choice.Mode {
	case ToolAuto, ToolNone, ToolRequired:
		if choice.Mode == ToolRequired && len(tools) == 0 {
			return nil, toolErrorf("tool_choice \"required\" needs tools")
		}
	case ToolFunction:
		if !seen[choice.Name] {
			return nil, toolErrorf("tool_choice names the function %q, which is not among the tools", choice.Name)
		}
	default:
		return nil, toolErrorf("tool_choice %q is not one of auto, none, required, function", choice.Mode)
	}
	out := make([]json.RawMessage, 0, len(tools))
	for _, t := range tools {
		params := map[string]any{"type": "object", "properties": map[string]any{}}
		if len(bytes.TrimSpace(t.Parameters)) > 0 && string(bytes.TrimSpace(t.Parameters)) != "null" {
			var v any
			dec := json.NewDecoder(bytes.NewReader(t.Parameters))
			dec.UseNumber() // numbers in the schema keep their digits
			if err := dec.Decode(&v); err != nil {
				return nil, toolErrorf("tool %s: parameters are not JSON: %v", t.Name, err)
			}
			obj, ok := v.(map[string]any)
			if !ok {
				return nil, toolErrorf("tool %s: parameters must be a JSON Schema object", t.Name)
			}
			if err := normaliseSchema(obj, 0); err != nil {
				return nil, toolErrorf("tool %s: parameters: %v", t.Name, err)
			}
			params = obj
		}
		fn := map[string]any{"name": t.Name, "description": t.Description, "parameters": params}
		raw, err := json.Marshal(map[string]any{"type": "function", "function": fn})
		if err != nil {
			return nil, toolErrorf("tool %s: %v", t.Name, err)
		}
		out = append(out, raw)
	}
	return out, nil
}

// normaliseSchema gives s, and every schema under properties and items, a
// single "type" string.
func normaliseSchema(s map[string]any, depth int) error {
	if depth > maxSchemaDepth {
		return fmt.Errorf("nested more than %d deep", maxSchemaDepth)
	}
	switch t := s["type"].(type) {
	case string:
	case []any:
		first := ""
		for _, x := range t {
			if name, ok := x.(string); ok && name == "null" {
				s["nullable"] = true
			} else if ok && first == "" {
				first = name
			}
		}
		s["type"] = cmp.Or(first, "string")
	default:
		s["type"] = inferType(s)
	}
	if props, ok := s["properties"].(map[string]any); ok {
		for name, p := range props {
			sub, ok := p.(map[string]any)
			if !ok {
				return fmt.Errorf("property %q is not a schema object", name)
			}
			if err := normaliseSchema(sub, depth+1); err != nil {
				return err
			}
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		if err := normaliseSchema(items, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// inferType names the type a schema without one implies.
func inferType(s map[string]any) string {
	switch {
	case s["properties"] != nil || s["additionalProperties"] != nil || s["required"] != nil:
		return "object"
	case s["items"] != nil || s["prefixItems"] != nil:
		return "array"
	}
	for _, key := range []string{"const", "enum"} {
		v := s[key]
		if list, ok := v.([]any); ok && len(list) > 0 {
			v = list[0]
		}
		switch v.(type) {
		case string:
			return "string"
		case json.Number:
			return "number"
		case bool:
			return "boolean"
		}
	}
	return "string"
}
