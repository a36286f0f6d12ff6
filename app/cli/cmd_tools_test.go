package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestToolsParse(t *testing.T) {
	in := "<|channel>thought\nplan<channel|>Sure.<|tool_call>call:bash{command:<|\"|>ls -la `pwd`<|\"|>,n:None}<tool_call|><|tool_call>call:f{a:<|\"|>open}<tool_call|><|tool_response>"
	var out, errb bytes.Buffer
	if code := runTools([]string{"parse"}, strings.NewReader(in), &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var got struct {
		Content, Thinking string
		ToolCalls         []struct {
			Name      string
			Arguments json.RawMessage
			Error     string
		} `json:"tool_calls"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%s: %v", out.String(), err)
	}
	if got.Content != "Sure." || got.Thinking != "plan" || len(got.ToolCalls) != 2 || got.ToolCalls[0].Name != "bash" ||
		string(got.ToolCalls[0].Arguments) != "{\"command\":\"ls -la `pwd`\",\"n\":null}" || got.ToolCalls[1].Error == "" || got.ToolCalls[1].Name != "f" {
		t.Fatalf("printed %s", out.String())
	}
	if code := runTools([]string{"nonsense"}, strings.NewReader(""), &out, &errb); code != 2 {
		t.Fatalf("bad usage exit %d", code)
	}
}

// TestAskTools: --tools reaches the model's prompt, bad tool files and
// choices are one-line CLI errors before the model loads.
func TestAskTools(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "tools.json")
	os.WriteFile(good, []byte(`[{"type":"function","function":{"name":"get_weather","description":"Weather","parameters":{"properties":{"city":{"type":"string","maxLength":10}},"required":["city"],"additionalProperties":false}}}]`), 0o644)
	var out, errb bytes.Buffer
	if code := runAsk([]string{"--model", tinyModel, "--backend", "go", "--tools", good, "--tool-choice", "auto", "--max-tokens", "2", "--json", "hi"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s %s", code, out.String(), errb.String())
	}
	var done struct {
		Stats struct {
			PromptTokens int `json:"prompt_tokens"`
		}
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	json.Unmarshal([]byte(lines[len(lines)-1]), &done)
	out.Reset()
	runAsk([]string{"--model", tinyModel, "--backend", "go", "--max-tokens", "2", "--json", "hi"}, &out, &errb)
	var plain struct {
		Stats struct {
			PromptTokens int `json:"prompt_tokens"`
		}
	}
	lines = strings.Split(strings.TrimSpace(out.String()), "\n")
	json.Unmarshal([]byte(lines[len(lines)-1]), &plain)
	if done.Stats.PromptTokens <= plain.Stats.PromptTokens+10 {
		t.Fatalf("with tools the prompt has %d tokens, without %d: the declaration is missing", done.Stats.PromptTokens, plain.Stats.PromptTokens)
	}
	// Under tool_choice required the (random) model's call is printed.
	out.Reset()
	if code := runAsk([]string{"--model", tinyModel, "--backend", "go", "--tools", good, "--tool-choice", "required", "--temperature", "1",
		"--seed", "3", "--max-tokens", "64", "--json", "hi"}, &out, &errb); code != 0 {
		t.Fatalf("required: exit %d: %s", code, errb.String())
	}
	var call struct {
		Type      string
		Name      string
		Arguments map[string]any
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.Contains(line, `"type":"tool_call"`) {
			json.Unmarshal([]byte(line), &call)
		}
	}
	if call.Name != "get_weather" || call.Arguments == nil || !strings.Contains(out.String(), `"stop_reason":"tool_calls"`) {
		t.Fatalf("required: printed %s", out.String())
	}
	out.Reset()
	runAsk([]string{"--model", tinyModel, "--backend", "go", "--tools", good, "--tool-choice", "required", "--seed", "3", "--max-tokens", "64", "hi"}, &out, &errb)
	if !strings.Contains(out.String(), "[tool call] get_weather {") {
		t.Fatalf("required, text: printed %q", out.String())
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"not":"a list"}`), 0o644)
	for _, args := range [][]string{
		{"--tools", bad, "hi"},
		{"--tools", good, "--tool-choice", "other_function", "hi"},
		{"--tool-choice", "required", "hi"},
		{"--tools", filepath.Join(dir, "missing.json"), "hi"},
	} {
		errb.Reset()
		if code := runAsk(append([]string{"--model", tinyModel, "--backend", "go"}, args...), &out, &errb); code != 1 || strings.Count(strings.TrimSpace(errb.String()), "\n") != 0 || !strings.Contains(errb.String(), "tool") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errb.String())
		}
	}
}

// perch ask --json-schema: the random tiny model's answer, sampled at
// temperature 1, is JSON that follows the schema; a FIFO, a non-JSON file and
// a schema the grammar refuses are one-line errors before any generation.
func TestAskJSONSchema(t *testing.T) {
	dir := t.TempDir()
	schema := filepath.Join(dir, "schema.json")
	os.WriteFile(schema, []byte(`{"type":"object","properties":{"n":{"type":"integer","minimum":0,"maximum":9},"ok":{"type":"boolean"}},"required":["n","ok"],"additionalProperties":false}`), 0o644)
	for seed := 1; seed <= 3; seed++ {
		var out, errb bytes.Buffer
		if code := runAsk([]string{"--model", tinyModel, "--backend", "go", "--json-schema", schema, "--temperature", "1",
			"--seed", fmt.Sprint(seed), "--max-tokens", "64", "give me json"}, &out, &errb); code != 0 {
			t.Fatalf("seed %d: exit %d: %s", seed, code, errb.String())
		}
		var v struct {
			N  *int  `json:"n"`
			OK *bool `json:"ok"`
		}
		dec := json.NewDecoder(strings.NewReader(strings.TrimSpace(out.String())))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil || v.N == nil || v.OK == nil || *v.N < 0 || *v.N > 9 {
			t.Fatalf("seed %d: answer %q does not follow the schema (%v)", seed, out.String(), err)
		}
	}
	notJSON := filepath.Join(dir, "not.json")
	os.WriteFile(notJSON, []byte(`{"type":`), 0o644)
	refused := filepath.Join(dir, "refused.json")
	os.WriteFile(refused, []byte(`{"not":{"type":"string"}}`), 0o644)
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{notJSON, refused, fifo, filepath.Join(dir, "missing.json")} {
		var out, errb bytes.Buffer
		if code := runAsk([]string{"--model", tinyModel, "--backend", "go", "--json-schema", path, "hi"}, &out, &errb); code != 1 ||
			strings.Count(strings.TrimSpace(errb.String()), "\n") != 0 || out.Len() != 0 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", filepath.Base(path), code, out.String(), errb.String())
		}
	}
}
