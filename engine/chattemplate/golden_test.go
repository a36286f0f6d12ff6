package chattemplate

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"perch/engine/tokenizer"
)

// The tiny checkpoint folder holds the real Gemma 4 chat_template.jinja,
// tokenizer_config.json and the tiny tokenizer the goldens were encoded with.
const tinyDir = "../tokenizer/testdata/tiny"

type goldenCase struct {
	Name                string            `json:"name"`
	Template            string            `json:"template"`
	Messages            []json.RawMessage `json:"messages"`
	Tools               []json.RawMessage `json:"tools"`
	AddGenerationPrompt bool              `json:"add_generation_prompt"`
	TemplateKwargs      map[string]any    `json:"template_kwargs"`
	Rendered            string            `json:"rendered"`
	IDs                 []int32           `json:"ids"`
}

func readCases(t testing.TB, path string) []goldenCase {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Cases []goldenCase `json:"cases"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return f.Cases
}

// inputOf turns a golden case (Python-side JSON) into an Input.
func inputOf(t testing.TB, c goldenCase) Input {
	t.Helper()
	in := Input{Tools: c.Tools, AddGenerationPrompt: c.AddGenerationPrompt}
	for k, v := range c.TemplateKwargs {
		if k == "enable_thinking" {
			in.EnableThinking = Bool(v.(bool))
			continue
		}
		if in.Extra == nil {
			in.Extra = map[string]any{}
		}
		in.Extra[k] = v
	}
	for _, raw := range c.Messages {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(raw, &fields); err != nil {
			t.Fatal(err)
		}
		m := Message{NullContent: true}
		str := func(key string) string {
			var s string
			if v, ok := fields[key]; ok {
				if err := json.Unmarshal(v, &s); err != nil {
					t.Fatalf("%s: %v", key, err)
				}
			}
			delete(fields, key)
			return s
		}
		m.Role, m.ToolCallID, m.Name, m.Reasoning = str("role"), str("tool_call_id"), str("name"), str("reasoning_content")
		if content, ok := fields["content"]; ok {
			switch content[0] {
			case '"':
				m.NullContent, m.Content = false, str("content")
			case '[':
				var parts []Part
				var ps []struct{ Type, Text string }
				if err := json.Unmarshal(content, &ps); err != nil {
					t.Fatal(err)
				}
				for _, p := range ps {
					parts = append(parts, Part{Type: p.Type, Text: p.Text})
				}
				m.NullContent, m.Parts = false, parts
				delete(fields, "content")
			case 'n':
				delete(fields, "content")
			}
		}
		if calls, ok := fields["tool_calls"]; ok {
			var cs []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string          `json:"name"`
					Arguments json.RawMessage `json:"arguments"`
				} `json:"function"`
			}
			if err := json.Unmarshal(calls, &cs); err != nil {
				t.Fatal(err)
			}
			for _, c := range cs {
				m.ToolCalls = append(m.ToolCalls, ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
			}
			delete(fields, "tool_calls")
		}
		if len(fields) > 0 { // e.g. tool_responses, or a numeric tool result in content
			m.Extra = fields
		}
		in.Messages = append(in.Messages, m)
	}
	return in
}

func loadTiny(t testing.TB) *Template {
	t.Helper()
	tmpl, err := Load(tinyDir)
	if err != nil {
		t.Fatal(err)
	}
	return tmpl
}

func TestGoldenRenders(t *testing.T) {
	tmpl := loadTiny(t)
	tok, err := tokenizer.Load(tinyDir)
	if err != nil {
		t.Fatal(err)
	}
	cases := readCases(t, "testdata/template-golden.json")
	rendered, idsOK := 0, 0
	for _, c := range cases {
		got, err := tmpl.Render(context.Background(), inputOf(t, c))
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		if got != c.Rendered {
			t.Errorf("%s: rendered text differs\n got  %q\n want %q", c.Name, got, c.Rendered)
			continue
		}
		rendered++
		if ids := tok.Encode(got, false); !slices.Equal(ids, c.IDs) {
			t.Errorf("%s: ids differ\n got  %v\n want %v", c.Name, ids, c.IDs)
			continue
		}
		idsOK++
	}
	t.Logf("template-golden.json: %d/%d renders byte for byte, %d/%d token id lists", rendered, len(cases), idsOK, len(cases))
	if len(cases) != 16 {
		t.Errorf("want 16 cases, file has %d", len(cases))
	}
}

func TestGoldenExtraRenders(t *testing.T) {
	tmpl := loadTiny(t)
	cases := readCases(t, "testdata/template-golden-extra.json")
	ok := 0
	for _, c := range cases {
		got, err := tmpl.Render(context.Background(), inputOf(t, c))
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		if got != c.Rendered {
			t.Errorf("%s: rendered text differs\n got  %q\n want %q", c.Name, got, c.Rendered)
			continue
		}
		ok++
	}
	t.Logf("template-golden-extra.json (Python float/None printing, str.strip set): %d/%d renders byte for byte", ok, len(cases))
}

func TestLoadSources(t *testing.T) {
	dir := t.TempDir()
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "no chat template") {
		t.Fatalf("empty folder: %v", err)
	}
	write := func(name, text string) {
		if err := os.WriteFile(dir+"/"+name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	render := func() string {
		tmpl, err := Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		out, err := tmpl.Render(context.Background(), Input{Messages: []Message{{Role: "user", Content: "hi"}}, Tools: []json.RawMessage{[]byte(`{}`)}})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	write("tokenizer_config.json", `{"bos_token": {"content": "<s>"}, "chat_template": [{"name": "default", "template": "D{{ bos_token }}"}, {"name": "tool_use", "template": "T{{ messages[0].content }}"}]}`)
	if got := render(); got != "Thi" {
		t.Errorf("tool_use variant: got %q", got)
	}
	write("tokenizer_config.json", `{"bos_token": "<s>", "chat_template": "S{{ bos_token }}"}`)
	if got := render(); got != "S<s>" {
		t.Errorf("string chat_template: got %q", got)
	}
	write("chat_template.jinja", "J{{ bos_token }}\n")
	if got := render(); got != "J<s>" {
		t.Errorf("chat_template.jinja: got %q", got)
	}
	write("chat_template.jinja", "{% if %}")
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "chat_template.jinja") {
		t.Errorf("broken template: %v", err)
	}
}

// TestRandomRenders compares 400 random conversations with Python's Jinja2
// (testdata/random_renders.py): the same text, or an error on both sides.
func TestRandomRenders(t *testing.T) {
	f, err := os.Open("testdata/template-random.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Renderer string `json:"renderer"`
		Cases    []struct {
			goldenCase
			Error string `json:"error"`
		} `json:"cases"`
	}
	if err := json.NewDecoder(zr).Decode(&file); err != nil {
		t.Fatal(err)
	}
	tmpl := loadTiny(t)
	ok, errs := 0, 0
	for _, c := range file.Cases {
		got, err := tmpl.Render(context.Background(), inputOf(t, c.goldenCase))
		switch {
		case c.Error != "" && err == nil:
			t.Errorf("%s: Python raised %s; rendered %q", c.Name, c.Error, got)
		case c.Error == "" && err != nil:
			t.Errorf("%s: %v", c.Name, err)
		case c.Error == "" && got != c.Rendered:
			t.Errorf("%s:\n got  %q\n want %q", c.Name, got, c.Rendered)
		default:
			ok++
			if c.Error != "" {
				errs++
			}
		}
	}
	t.Logf("%d/%d random conversations agree with %s (%d are errors on both sides)", ok, len(file.Cases), file.Renderer, errs)
}
