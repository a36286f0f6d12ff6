package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"testing"
)

// answerSchema exercises objects, enums, bounds, patterns and arrays.
const answerSchema = `{"type":"object","properties":{
 "name":{"type":"string","minLength":1,"maxLength":10},
 "kind":{"enum":["cat","dog",7,null]},
 "age":{"type":"integer","minimum":0,"maximum":30},
 "code":{"type":"string","pattern":"^[a-f0-9]{4}$"},
 "tags":{"type":"array","items":{"type":"boolean"},"maxItems":3}},
 "required":["name","kind","age","code"],"additionalProperties":false}`

// validateWithPython checks each instance against schema with
// python3-jsonschema, or reports that it is not installed.
func validateWithPython(t *testing.T, schema string, instances []string) ([]bool, bool) {
	t.Helper()
	in, _ := json.Marshal(map[string]any{"schema": json.RawMessage(schema), "instances": instances})
	cmd := exec.Command("python3", "-c", `
import sys, json
try:
    import jsonschema
except ImportError:
    print("absent"); sys.exit(0)
d = json.load(sys.stdin)
v = jsonschema.validators.validator_for(d["schema"])(d["schema"], format_checker=jsonschema.FormatChecker())
print(json.dumps([v.is_valid(json.loads(s)) for s in d["instances"]]))
`)
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.Output()
	if err != nil || string(bytes.TrimSpace(out)) == "absent" {
		return nil, false
	}
	var res []bool
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("python validator said %q: %v", out, err)
	}
	return res, true
}

// TestSchemaConstrainedAnswers: the tiny model's random weights, sampled
// at temperature 1, always answer JSON that validates.
func TestSchemaConstrainedAnswers(t *testing.T) {
	e := openTiny(t, "text-tiny", Options{})
	one := float32(1)
	var answers []string
	for seed := uint64(1); len(answers) < 50; seed++ {
		if seed > 200 {
			t.Fatalf("only %d of 200 answers completed within the token budget", len(answers))
		}
		s := seed
		ch, err := e.Generate(context.Background(), Request{Messages: []Message{Text(RoleUser, "describe a pet as JSON")}, MaxTokens: 160,
			ResponseSchema: []byte(answerSchema), Sampling: Sampling{Temperature: &one, Seed: &s}})
		if err != nil {
			t.Fatal(err)
		}
		_, last := collect(t, ch)
		if last.Kind != EventDone {
			t.Fatalf("seed %d: %v", seed, last.Err)
		}
		if last.StopReason == StopMaxTokens {
			continue // cut short: not an answer
		}
		ids := last.Stats.TokenIDs
		text := e.tok.Decode(ids, true)
		if !json.Valid([]byte(text)) {
			t.Fatalf("seed %d: not JSON: %q", seed, text)
		}
		answers = append(answers, text)
	}
	t.Logf("%d answers (e.g. %s)", len(answers), answers[0])
	res, ok := validateWithPython(t, answerSchema, answers)
	if !ok {
		t.Log("python3-jsonschema not installed: answers checked as JSON only")
		return
	}
	for i, valid := range res {
		if !valid {
			t.Errorf("answer %q does not validate", answers[i])
		}
	}
}

func TestSchemaCompileErrorIsTyped(t *testing.T) {
	e := openTiny(t, "text-tiny", Options{})
	_, err := e.Generate(context.Background(), Request{Messages: []Message{Text(RoleUser, "hi")},
		ResponseSchema: []byte(`{"type":"string","pattern":"(?=x)"}`)})
	var se *SchemaError
	if !errors.As(err, &se) {
		t.Fatalf("got %v, want a SchemaError", err)
	}
}
