package jinja

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
)

var fuzzLimits = Limits{Steps: 200_000, Output: 1 << 20, Alloc: 32 << 20, Depth: 50, Timeout: 2 * time.Second}

// FuzzTemplate parses and renders arbitrary templates with arbitrary JSON
// data: errors are fine, a panic (reported as an internal error) or a
// missed limit is not.
func FuzzTemplate(f *testing.F) {
	data, err := os.ReadFile("testdata/jinja-golden.json")
	if err != nil {
		f.Fatal(err)
	}
	var golden oracleFile
	if err := json.Unmarshal(data, &golden); err != nil {
		f.Fatal(err)
	}
	for _, c := range golden.Cases {
		f.Add(c.Template, string(c.Vars))
	}
	if src, err := os.ReadFile("../../tokenizer/testdata/tiny/chat_template.jinja"); err == nil {
		f.Add(string(src), `{"messages": [{"role": "user", "content": "hi"}], "add_generation_prompt": true}`)
	}
	f.Add("{{ x", `{}`)
	f.Add("{% for a in b %}{% endfor", `{"b": [1]}`)
	f.Fuzz(func(t *testing.T, src, vars string) {
		tmpl, err := Parse(src)
		if err != nil {
			if strings.Contains(err.Error(), "internal error") {
				t.Fatalf("parse panicked: %v", err)
			}
			return
		}
		values := map[string]Value{}
		if v, err := FromJSON([]byte(vars)); err == nil {
			if d, ok := v.(*Dict); ok {
				for i, k := range d.keys {
					if s, ok := k.(string); ok {
						values[s] = d.vals[i]
					}
				}
			}
		}
		start := time.Now()
		out, err := tmpl.Render(context.Background(), values, time.Unix(0, 0), fuzzLimits)
		if err != nil && strings.Contains(err.Error(), "internal error") {
			t.Fatalf("render panicked: %v", err)
		}
		if len(out) > fuzzLimits.Output {
			t.Fatalf("output of %d bytes passed the limit", len(out))
		}
		if d := time.Since(start); d > 4*fuzzLimits.Timeout {
			t.Fatalf("render took %v", d)
		}
	})
}

// FuzzFromJSON checks the JSON reader against encoding/json's verdict.
func FuzzFromJSON(f *testing.F) {
	for _, s := range []string{`{"a": [1, 2.5, "x\u00e9", null, true]}`, `[`, `"\ud800"`, `1e999`, `{"a":1,"a":2}`, ` 12 `, `[[[[]]]]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := FromJSON(data)
		if (err == nil) != json.Valid(data) && !strings.Contains(errString(err), "nested") {
			t.Fatalf("FromJSON error %v, json.Valid %v", err, json.Valid(data))
		}
		if err == nil {
			b := &boundedBuilder{max: 1 << 20}
			writeRepr(b, v, 0)
		}
	})
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
