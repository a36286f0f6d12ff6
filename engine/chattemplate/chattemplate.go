// Package chattemplate renders a checkpoint's own Jinja chat template into
// the prompt text the model was trained on, exactly as Hugging Face's
// apply_chat_template does (same variables, same Jinja2 environment, Python
// printing), and safely: templates come from downloaded checkpoints and are
// untrusted.
//
// Rendering uses the bounded interpreter in ./jinja rather than
// github.com/ardanlabs/jinja: that library has no step, size, recursion or
// time limit and no cancellation (range(10^8) ran 56 s and took 9.7 GB; a
// self-recursive macro overflows the Go stack, which kills the process), and
// it prints floats, None and trim differently from Python with no way to
// change that from outside. Our interpreter counts steps, output and
// allocated bytes, bounds macro depth and wall time, and stops with an error
// (errors.Is(err, jinja.ErrLimit)); it runs in-process, so a render costs
// microseconds, not a process start.
package chattemplate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"perch/engine/chattemplate/jinja"
)

// Size guards for the files Load reads.
const (
	maxTemplateBytes = 4 << 20
	maxConfigBytes   = 64 << 20
)

// Template is a parsed chat template; safe for concurrent use.
type Template struct {
	def     *jinja.Template // the template
	toolUse *jinja.Template // a "tool_use" variant, used when tools are given
	source  string
	tokens  map[string]string // bos_token, eos_token, … from tokenizer_config.json
	// Limits bound every render; zero fields take jinja.DefaultLimits.
	Limits jinja.Limits
}

// Load reads the chat template of a checkpoint folder: chat_template.jinja,
// else the chat_template of tokenizer_config.json (a string, or a list of
// {name, template} where "default" is used and "tool_use" when tools are
// given), else chat_template.json. Special-token names (bos_token, …) come
// from tokenizer_config.json when present.
func Load(dir string) (*Template, error) {
	var cfg struct {
		ChatTemplate json.RawMessage `json:"chat_template"`
	}
	cfgPath := filepath.Join(dir, "tokenizer_config.json")
	cfgData, err := readCapped(cfgPath, maxConfigBytes)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if cfgData != nil {
		if err := json.Unmarshal(cfgData, &cfg); err != nil {
			return nil, fmt.Errorf("%s: %v", cfgPath, err)
		}
	}
	var t *Template
	jinjaPath := filepath.Join(dir, "chat_template.jinja")
	src, err := readCapped(jinjaPath, maxTemplateBytes)
	switch {
	case err == nil:
		if t, err = New(string(src)); err != nil {
			return nil, fmt.Errorf("%s: %w", jinjaPath, err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	case len(cfg.ChatTemplate) > 0 && string(cfg.ChatTemplate) != "null":
		if t, err = fromConfig(cfg.ChatTemplate); err != nil {
			return nil, fmt.Errorf("%s: chat_template: %w", cfgPath, err)
		}
	default:
		jsonPath := filepath.Join(dir, "chat_template.json")
		data, err := readCapped(jsonPath, maxTemplateBytes)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("no chat template in %s: expected chat_template.jinja, a chat_template in tokenizer_config.json, or chat_template.json", dir)
		}
		if err != nil {
			return nil, err
		}
		var ct struct {
			ChatTemplate json.RawMessage `json:"chat_template"`
		}
		if err := json.Unmarshal(data, &ct); err != nil || len(ct.ChatTemplate) == 0 {
			return nil, fmt.Errorf("%s: no chat_template string in it", jsonPath)
		}
		if t, err = fromConfig(ct.ChatTemplate); err != nil {
			return nil, fmt.Errorf("%s: %w", jsonPath, err)
		}
	}
	if cfgData != nil {
		t.tokens = specialTokenNames(cfgData)
	}
	return t, nil
}

// New parses template source.
func New(source string) (*Template, error) {
	if len(source) > maxTemplateBytes {
		return nil, fmt.Errorf("chat template is %d bytes, more than the %d allowed", len(source), maxTemplateBytes)
	}
	tmpl, err := jinja.Parse(source)
	if err != nil {
		return nil, err
	}
	return &Template{def: tmpl, source: source}, nil
}

// fromConfig reads tokenizer_config.json's chat_template: a string or a
// list of {"name", "template"}.
func fromConfig(raw json.RawMessage) (*Template, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return New(s)
	}
	var named []struct {
		Name     string `json:"name"`
		Template string `json:"template"`
	}
	if err := json.Unmarshal(raw, &named); err != nil {
		return nil, fmt.Errorf("want a string or a list of {name, template}: %v", err)
	}
	var t, toolUse *Template
	for _, n := range named {
		var err error
		switch n.Name {
		case "default":
			t, err = New(n.Template)
		case "tool_use":
			toolUse, err = New(n.Template)
		}
		if err != nil {
			return nil, fmt.Errorf("template %q: %w", n.Name, err)
		}
	}
	if t == nil {
		return nil, fmt.Errorf("no template named \"default\"")
	}
	if toolUse != nil {
		t.toolUse = toolUse.def
	}
	return t, nil
}

// specialTokenNames reads the names HF passes to every template
// (special_tokens_map): bos_token, eos_token, unk_token, pad_token,
// mask_token, sep_token, cls_token. Each is a string or {"content": …}.
func specialTokenNames(cfg []byte) map[string]string {
	var raw map[string]json.RawMessage
	if json.Unmarshal(cfg, &raw) != nil {
		return nil
	}
	out := map[string]string{}
	for _, key := range []string{"bos_token", "eos_token", "unk_token", "pad_token", "mask_token", "sep_token", "cls_token"} {
		var s string
		if json.Unmarshal(raw[key], &s) == nil && s != "" {
			out[key] = s
			continue
		}
		var obj struct {
			Content string `json:"content"`
		}
		if json.Unmarshal(raw[key], &obj) == nil && obj.Content != "" {
			out[key] = obj.Content
		}
	}
	return out
}

// Source returns the template text.
func (t *Template) Source() string { return t.source }

func readCapped(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: larger than the %d MiB allowed", path, limit>>20)
	}
	return data, nil
}

// Render renders the conversation. Errors from the template itself
// (raise_exception) are *jinja.RaisedError; a template stopped at a limit
// gives an error that wraps jinja.ErrLimit.
func (t *Template) Render(ctx context.Context, in Input) (string, error) {
	vars, err := t.variables(in)
	if err != nil {
		return "", err
	}
	tmpl := t.def
	if t.toolUse != nil && len(in.Tools) > 0 {
		tmpl = t.toolUse
	}
	now := in.Now
	if now.IsZero() {
		now = time.Now()
	}
	return tmpl.Render(ctx, vars, now, t.Limits)
}
