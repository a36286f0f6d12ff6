package grammar

import (
	"strings"
	"testing"
)

// permutations calls f with every ordering of every subset of names.
func permutations(names []string, f func([]string)) {
	var rec func(prefix []string, used uint)
	rec = func(prefix []string, used uint) {
		f(prefix)
		for i, n := range names {
			if used&(1<<i) == 0 {
				rec(append(prefix[:len(prefix):len(prefix)], n), used|1<<i)
			}
		}
	}
	rec(nil, 0)
}

func objectOf(keys []string, values map[string]string) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = `"` + k + `":` + values[k]
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// TestAnyOrderProperties: every ordering of every subset of the declared
// properties is accepted exactly when the required ones are all there;
// a repeated property, an undeclared one where none may be, and a value
// of the wrong type are refused.
func TestAnyOrderProperties(t *testing.T) {
	values := map[string]string{"id": "7", "name": `"x"`, "ok": "true", "tags": `["a"]`, "n\"q": "null"}
	names := []string{"id", "name", "ok", "tags"}
	for _, addl := range []string{"false", "true", `{"type":"integer"}`} {
		schema := `{"type":"object","properties":{"id":{"type":"integer"},"name":{"type":"string"},"ok":{"type":"boolean"},` +
			`"tags":{"type":"array","items":{"type":"string"}}},"required":["name","id"],"additionalProperties":` + addl + `}`
		g := mustCompile(t, schema)
		count := 0
		permutations(names, func(keys []string) {
			count++
			inst := objectOf(keys, values)
			want := strings.Contains(inst, `"id"`) && strings.Contains(inst, `"name"`)
			if got := g.Validate([]byte(inst)); got != want {
				t.Errorf("%s: %s accepted=%v, want %v", addl, inst, got, want)
			}
			if len(keys) > 0 {
				dup := objectOf(append(keys, keys[0]), values)
				if g.Validate([]byte(dup)) {
					t.Errorf("%s: accepted the repeated key in %s", addl, dup)
				}
			}
		})
		if count != 65 {
			t.Fatalf("%d orderings, want 65", count)
		}
		for _, bad := range []string{`{"name":"x","id":"7"}`, `{"id":7,"name":1}`, `{"id":7,"name":"x","ok":1}`} {
			if g.Validate([]byte(bad)) {
				t.Errorf("%s: accepted %s", addl, bad)
			}
		}
		extra := `{"name":"x","zz":3,"id":7}`
		if got, want := g.Validate([]byte(extra)), addl != "false"; got != want {
			t.Errorf("%s: %s accepted=%v, want %v", addl, extra, got, want)
		}
		escaped := `{"\u006eame":"x","id":7,"\u006eame":"y"}` // the same key spelled two ways
		if g.Validate([]byte(escaped)) {
			t.Errorf("%s: accepted the repeated key in %s", addl, escaped)
		}
	}
}

// TestAnyOrderMaxProperties: where maxProperties leaves room only for the
// required properties left, only they may come.
func TestAnyOrderMaxProperties(t *testing.T) {
	g := mustCompile(t, `{"type":"object","properties":{"a":{},"b":{}},"required":["b"],"maxProperties":2}`)
	for inst, want := range map[string]bool{
		`{"b":1}`: true, `{"a":1,"b":2}`: true, `{"x":1,"b":2}`: true, `{"b":1,"x":2}`: true,
		`{"a":1,"x":2}`: false, `{"x":1,"y":2}`: false, `{"b":1,"a":2,"x":3}`: false, `{"a":1}`: false,
	} {
		if got := g.Validate([]byte(inst)); got != want {
			t.Errorf("%s accepted=%v, want %v", inst, got, want)
		}
	}
}

// TestAnyOrderMaskNoDeadEnd: over the real vocabulary, the key tokens a
// closed object allows each lead on to a declared key not yet written.
func TestAnyOrderMaskNoDeadEnd(t *testing.T) {
	tok, v := gemmaVocab(t)
	g := mustCompile(t, `{"type":"object","properties":{"alpha":{"type":"integer"},"beta":{"type":"integer"},"al":{"type":"integer"}},"additionalProperties":false}`)
	c := NewConstraint(g, v, []int32{1})
	for _, id := range tok.Encode(`{"alpha":1,`, false) {
		c.Mask()
		if err := c.Advance(id); err != nil {
			t.Fatal(err)
		}
	}
	mask := c.Mask()
	n := 0
	for w, bits := range mask {
		for ; bits != 0; bits &= bits - 1 {
			id := int32(w*64 + trailingZeros(bits))
			b := string(v.bytes[id])
			n++
			ok := false
			for _, key := range []string{`"beta":`, `"al":`} {
				if strings.HasPrefix(key, b) || strings.HasPrefix(b, key) {
					ok = true
				}
			}
			if !ok {
				t.Errorf("token %q allowed after {\"alpha\":1,", b)
			}
		}
	}
	if n == 0 {
		t.Fatal("no token allowed after {\"alpha\":1,")
	}
}
