package chattemplate

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"perch/engine/chattemplate/jinja"
)

// Input is one conversation to render, in the OpenAI / Hugging Face chat
// shape the templates expect.
type Input struct {
	Messages []Message
	// Tools are JSON schemas, one object per tool (OpenAI style
	// {"type": "function", "function": {...}}); key order is kept.
	Tools               []json.RawMessage
	AddGenerationPrompt bool
	// EnableThinking is passed as enable_thinking when set; templates tell
	// "false" from "not given" (Qwen 3 does), so nil means not given.
	EnableThinking *bool
	// BOSToken and EOSToken override the names from tokenizer_config.json.
	BOSToken, EOSToken string
	// Extra holds further template variables (chat_template_kwargs): JSON-like
	// Go values (string, bool, int, float64, json.Number, json.RawMessage,
	// []any, map[string]any). They may not replace messages, tools,
	// documents or add_generation_prompt.
	Extra map[string]any
	// Now is what strftime_now formats; zero means the current time.
	Now time.Time
}

// Message is one chat turn.
type Message struct {
	Role string // system, developer, user, assistant, tool
	// Content is the text; when Parts is non-nil the content is that list
	// of parts instead, and with NullContent (and no Parts) it is None.
	Content     string
	Parts       []Part
	NullContent bool
	ToolCalls   []ToolCall
	// Reasoning is an assistant turn's thinking, passed as reasoning_content.
	Reasoning string
	// ToolCallID and Name identify the call a role "tool" message answers.
	ToolCallID string
	Name       string
	// Extra holds further message keys as JSON (e.g. Gemma's native
	// "tool_responses"), added after the standard ones in sorted order.
	Extra map[string]json.RawMessage
}

// Part is an item of list content: {"type": "text", "text": …} or a media
// placeholder {"type": "image" | "audio" | "video"}.
type Part struct {
	Type string
	Text string
}

// ToolCall is a function call made by an assistant turn.
type ToolCall struct {
	ID   string
	Name string
	// Arguments is a JSON object (key order kept, ints and floats as Python
	// would see them) or a JSON string holding unparsed arguments.
	Arguments json.RawMessage
}

// Bool returns a pointer to b (for Input.EnableThinking).
func Bool(b bool) *bool { return &b }

var reservedVars = []string{"messages", "tools", "documents", "add_generation_prompt"}

// variables builds what HF's apply_chat_template passes to render():
// messages, tools, documents, add_generation_prompt, the special-token
// names, then the template kwargs.
func (t *Template) variables(in Input) (map[string]jinja.Value, error) {
	msgs := &jinja.List{Items: make([]jinja.Value, len(in.Messages))}
	for i, m := range in.Messages {
		d, err := messageValue(m)
		if err != nil {
			return nil, fmt.Errorf("message %d: %w", i, err)
		}
		msgs.Items[i] = d
	}
	var tools jinja.Value
	if len(in.Tools) > 0 {
		l := &jinja.List{}
		for i, raw := range in.Tools {
			v, err := jinja.FromJSON(raw)
			if err != nil {
				return nil, fmt.Errorf("tool %d: %w", i, err)
			}
			l.Items = append(l.Items, v)
		}
		tools = l
	}
	vars := map[string]jinja.Value{
		"messages":              msgs,
		"tools":                 tools,
		"documents":             nil,
		"add_generation_prompt": in.AddGenerationPrompt,
	}
	for k, v := range t.tokens {
		vars[k] = v
	}
	if in.BOSToken != "" {
		vars["bos_token"] = in.BOSToken
	}
	if in.EOSToken != "" {
		vars["eos_token"] = in.EOSToken
	}
	if in.EnableThinking != nil {
		vars["enable_thinking"] = *in.EnableThinking
	}
	for k, v := range in.Extra {
		if slices.Contains(reservedVars, k) {
			return nil, fmt.Errorf("extra variable %q would replace a standard one", k)
		}
		val, err := jinja.FromGo(v)
		if err != nil {
			return nil, fmt.Errorf("extra variable %q: %w", k, err)
		}
		vars[k] = val
	}
	return vars, nil
}

func messageValue(m Message) (*jinja.Dict, error) {
	d := jinja.NewDict()
	d.Set("role", m.Role)
	switch {
	case m.Parts != nil:
		parts := &jinja.List{Items: make([]jinja.Value, len(m.Parts))}
		for i, p := range m.Parts {
			pd := jinja.NewDict()
			pd.Set("type", p.Type)
			if p.Type == "text" {
				pd.Set("text", p.Text)
			}
			parts.Items[i] = pd
		}
		d.Set("content", parts)
	case m.NullContent:
		d.Set("content", nil)
	default:
		d.Set("content", m.Content)
	}
	if m.Reasoning != "" {
		d.Set("reasoning_content", m.Reasoning)
	}
	if len(m.ToolCalls) > 0 {
		calls := &jinja.List{}
		for i, c := range m.ToolCalls {
			fn := jinja.NewDict()
			fn.Set("name", c.Name)
			args := jinja.Value(jinja.NewDict())
			if raw := strings.TrimSpace(string(c.Arguments)); raw != "" {
				var err error
				if args, err = jinja.FromJSON([]byte(raw)); err != nil {
					return nil, fmt.Errorf("tool call %d (%s) arguments: %w", i, c.Name, err)
				}
			}
			fn.Set("arguments", args)
			call := jinja.NewDict()
			if c.ID != "" {
				call.Set("id", c.ID)
			}
			call.Set("type", "function")
			call.Set("function", fn)
			calls.Items = append(calls.Items, call)
		}
		d.Set("tool_calls", calls)
	}
	if m.ToolCallID != "" {
		d.Set("tool_call_id", m.ToolCallID)
	}
	if m.Name != "" {
		d.Set("name", m.Name)
	}
	keys := make([]string, 0, len(m.Extra))
	for k := range m.Extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v, err := jinja.FromJSON(m.Extra[k])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		d.Set(k, v)
	}
	return d, nil
}
