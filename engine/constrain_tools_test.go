package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

const weatherParams = `{"type":"object","properties":{
 "city":{"type":"string","minLength":1,"maxLength":12},
 "unit":{"enum":["celsius","fahrenheit"]},
 "days":{"type":"integer","minimum":1,"maximum":7},
 "detail":{"type":["boolean","null"]}},
 "required":["city","unit"],"additionalProperties":false}`

// gemmaArgs converts the arguments of a call in Gemma-4's syntax (keys
// bare, strings between <|"|>, None for null) to JSON: a test-only reader
// for what the grammar writes.
type gemmaArgs struct {
	s   string
	pos int
}

const gq = `<|"|>`

func (p *gemmaArgs) value() (any, error) {
	switch {
	case strings.HasPrefix(p.s[p.pos:], gq):
		end := strings.Index(p.s[p.pos+len(gq):], gq)
		if end < 0 {
			return nil, fmt.Errorf("unterminated string")
		}
		v := p.s[p.pos+len(gq) : p.pos+len(gq)+end]
		p.pos += 2*len(gq) + end
		return v, nil
	case strings.HasPrefix(p.s[p.pos:], "{"):
		p.pos++
		obj := map[string]any{}
		for !strings.HasPrefix(p.s[p.pos:], "}") {
			colon := strings.IndexByte(p.s[p.pos:], ':')
			if colon < 0 {
				return nil, fmt.Errorf("no ':' after a key")
			}
			key := p.s[p.pos : p.pos+colon]
			p.pos += colon + 1
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			obj[key] = v
			if strings.HasPrefix(p.s[p.pos:], ",") {
				p.pos++
			}
		}
		p.pos++
		return obj, nil
	}
	end := p.pos
	for end < len(p.s) && !strings.ContainsRune(",}]", rune(p.s[end])) {
		end++
	}
	word := p.s[p.pos:end]
	p.pos = end
	if word == "None" {
		return nil, nil
	}
	var v any
	if err := json.Unmarshal([]byte(word), &v); err != nil {
		return nil, fmt.Errorf("bare value %q: %v", word, err)
	}
	return v, nil
}

// TestToolChoiceRequiredCallsValidate: with tool_choice required, every
// call the random tiny model makes names a tool and has arguments that
// validate, in Gemma-4's own syntax, ended by <|tool_response>.
func TestToolChoiceRequiredCallsValidate(t *testing.T) {
	e := openTiny(t, "text-tiny", Options{})
	one := float32(1)
	single := false
	var args []string
	for seed := uint64(1); len(args) < 50; seed++ {
		if seed > 200 {
			t.Fatalf("only %d of 200 answers completed within the token budget", len(args))
		}
		s := seed
		ch, err := e.Generate(context.Background(), Request{Messages: []Message{Text(RoleUser, "weather?")}, MaxTokens: 120,
			Tools:      []Tool{{Name: "get_weather", Parameters: []byte(weatherParams)}, {Name: "noop"}},
			ToolChoice: ToolChoice{Mode: ToolRequired}, ParallelToolCalls: &single,
			Sampling: Sampling{Temperature: &one, Seed: &s}})
		if err != nil {
			t.Fatal(err)
		}
		_, last := collect(t, ch)
		if last.Kind != EventDone {
			t.Fatalf("seed %d: %v", seed, last.Err)
		}
		if last.StopReason == StopMaxTokens {
			continue
		}
		text := e.tok.Decode(last.Stats.TokenIDs, false)
		if !strings.HasSuffix(text, "<tool_call|><|tool_response>") || strings.Count(text, "<|tool_call>") != 1 {
			t.Fatalf("seed %d: not one call ended by <|tool_response>: %q", seed, text)
		}
		name, rest, ok := strings.Cut(strings.TrimPrefix(text, "<|tool_call>call:"), "{")
		if !ok {
			t.Fatalf("seed %d: %q", seed, text)
		}
		p := &gemmaArgs{s: "{" + strings.TrimSuffix(rest, "<tool_call|><|tool_response>")}
		v, err := p.value()
		if err != nil || p.pos != len(p.s) {
			t.Fatalf("seed %d: arguments of %q do not read back: %v", seed, text, err)
		}
		switch name {
		case "noop":
		case "get_weather":
			j, _ := json.Marshal(v)
			args = append(args, string(j))
		default:
			t.Fatalf("seed %d: called %q", seed, name)
		}
	}
	t.Logf("%d get_weather calls (e.g. %s)", len(args), args[0])
	res, ok := validateWithPython(t, weatherParams, args)
	if !ok {
		t.Log("python3-jsonschema not installed: arguments checked as JSON only")
		return
	}
	for i, valid := range res {
		if !valid {
			t.Errorf("arguments %s do not validate", args[i])
		}
	}
}

// TestStrictToolUnderAuto: with tool_choice auto and a strict tool the
// model may answer text, but each call it makes has valid arguments.
func TestStrictToolUnderAuto(t *testing.T) {
	e := openTiny(t, "text-tiny", Options{})
	one := float32(1)
	calls, texts := 0, 0
	var args []string
	for seed := uint64(1); seed <= 40; seed++ {
		s := seed
		ch, err := e.Generate(context.Background(), Request{Messages: []Message{Text(RoleUser, "weather?")}, MaxTokens: 100,
			Tools:    []Tool{{Name: "get_weather", Parameters: []byte(weatherParams), Strict: true}},
			Sampling: Sampling{Temperature: &one, Seed: &s}})
		if err != nil {
			t.Fatal(err)
		}
		_, last := collect(t, ch)
		if last.Kind != EventDone {
			t.Fatalf("seed %d: %v", seed, last.Err)
		}
		text := e.tok.Decode(last.Stats.TokenIDs, false)
		i := strings.Index(text, "<|tool_call>")
		if i < 0 {
			texts++
			continue
		}
		end := strings.Index(text[i:], "<tool_call|>")
		if end < 0 {
			continue // cut short by the token budget
		}
		calls++
		call := text[i+len("<|tool_call>call:get_weather") : i+end]
		p := &gemmaArgs{s: call}
		v, err := p.value()
		if err != nil || p.pos != len(p.s) {
			t.Fatalf("seed %d: arguments %q do not read back: %v", seed, call, err)
		}
		j, _ := json.Marshal(v)
		args = append(args, string(j))
	}
	t.Logf("%d answers with a call, %d without", calls, texts)
	if res, ok := validateWithPython(t, weatherParams, args); ok {
		for i, valid := range res {
			if !valid {
				t.Errorf("arguments %s do not validate", args[i])
			}
		}
	}
}
