package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGrammarCheck(t *testing.T) {
	dir := t.TempDir()
	schema := filepath.Join(dir, "s.json")
	os.WriteFile(schema, []byte(`{"type":"object","properties":{"n":{"type":"integer","maximum":9}},"required":["n"],"additionalProperties":false}`), 0o644)
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"type":"string","pattern":"(?!x)"}`), 0o644)
	model := tinyModel
	for _, tc := range []struct {
		schema, in       string
		compiled, accept bool
	}{
		{schema, `{"n":7}`, true, true},
		{schema, "{\"n\":7}\n", true, true},
		{schema, `{"n":10}`, true, false},
		{schema, `{"n":7`, true, false},
		{schema, `{ "n":7}`, true, false},
		{bad, `"a"`, false, false},
	} {
		var out, errOut bytes.Buffer
		if code := runGrammar([]string{"check", "--model", model, "--schema", tc.schema}, strings.NewReader(tc.in), &out, &errOut); code != 0 {
			t.Fatalf("%q: exit %d: %s", tc.in, code, errOut.String())
		}
		var res grammarCheck
		if err := json.Unmarshal(out.Bytes(), &res); err != nil || strings.Count(out.String(), "\n") != 1 {
			t.Fatalf("%q: output %q is not one JSON line: %v", tc.in, out.String(), err)
		}
		if res.Compiled != tc.compiled || res.Accepted != tc.accept {
			t.Errorf("%q: got %+v", tc.in, res)
		}
		if res.Accepted && (res.Tokens == 0 || len(res.MaskUS) != res.Tokens) {
			t.Errorf("%q: %d tokens, %d mask times", tc.in, res.Tokens, len(res.MaskUS))
		}
	}
	var out, errOut bytes.Buffer
	if code := runGrammar([]string{"check", "--schema", schema}, strings.NewReader(""), &out, &errOut); code != 2 {
		t.Errorf("missing --model: exit %d, want 2", code)
	}
}
