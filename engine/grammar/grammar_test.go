package grammar

import (
	"errors"
	"testing"
)

func mustCompile(t *testing.T, schema string) *Grammar {
	t.Helper()
	g, err := Compile([]byte(schema))
	if err != nil {
		t.Fatalf("compile %s: %v", schema, err)
	}
	return g
}

func TestValidateSchemas(t *testing.T) {
	cases := []struct {
		schema string
		ok     []string
		bad    []string
	}{
		{`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"string"}},"required":["a"],"additionalProperties":false}`,
			[]string{`{"a":1}`, `{"a":-12,"b":"x"}`, `{"a":0,"b":""}`, `{"b":"x","a":1}`},
			[]string{`{}`, `{"b":"x"}`, `{"a":1.5}`, `{"a":01}`, `{"a":1,"c":2}`, `{ "a":1}`, `{"a":1,}`, `{"a":1,"a":1}`, `{"b":"x","a":1,"b":"y"}`}},
		{`{"type":"string","minLength":2,"maxLength":3}`,
			[]string{`"ab"`, `"abc"`, `"é\u00e9"`, `"\ud83d\ude00a"`},
			[]string{`"a"`, `"abcd"`, `"\ud83d"`, "\"a\x01\""}},
		{`{"type":"string","pattern":"^[a-z]+\\d{2}$"}`, []string{`"ab12"`}, []string{`"ab1"`, `"1ab12"`, `"ab123"`}},
		{`{"type":"string","pattern":"\\d"}`, []string{`"a1b"`, `"7"`}, []string{`"ab"`}},
		{`{"type":"number","minimum":0,"exclusiveMaximum":10}`, []string{`0`, `9.99`, `5`}, []string{`-1`, `10`, `10.5`, `-0.1`, `1e2`}},
		{`{"type":"number","minimum":0}`, []string{`1e-6`, `1E+2`, `0e5`, `2.5e3`, `0.0e-0`}, []string{`-1e-6`, `-2E3`, `1e`, `1e+`}},
		{`{"type":"number","minimum":0,"exclusiveMaximum":1}`, []string{`5e-1`, `9.9E-1`, `1e-22`, `0e9`}, []string{`1e0`, `10e-1`, `2e0`, `1e1`, `11e-1`, `1e+1`, `-5e-1`}},
		{`{"type":"number","minimum":5,"maximum":6}`, []string{`5`, `55e-1`, `0.6e1`, `6.0`}, []string{`9`, `9e-1`, `7`, `6.1`, `60e-1e`}},
		{`{"type":"integer","exclusiveMinimum":0}`, []string{`1`, `42`}, []string{`0`, `-0`, `-3`, `1.5`}},
		{`{"enum":["red","green",3,null,{"a":[1]}]}`, []string{`"red"`, `3`, `null`, `{"a":[1]}`}, []string{`"blue"`, `4`, `33`, `{"a":[2]}`}},
		{`{"type":"array","items":{"type":"boolean"},"minItems":1,"maxItems":2}`, []string{`[true]`, `[true,false]`}, []string{`[]`, `[true,true,true]`, `[1]`}},
		{`{"prefixItems":[{"type":"string"},{"type":"integer"}],"items":false}`, []string{`["a",1]`, `["a"]`, `[]`}, []string{`["a",1,2]`, `[1,"a"]`}},
		{`{"anyOf":[{"type":"string"},{"type":"integer"}]}`, []string{`"x"`, `5`}, []string{`5.5`, `null`}},
		{`{"allOf":[{"properties":{"a":{"type":"integer"}},"required":["a"]},{"properties":{"a":{"minimum":3}}}]}`, []string{`{"a":3}`}, []string{`{"a":2}`, `{}`}},
		{`{"$defs":{"n":{"type":"object","properties":{"v":{"type":"integer"},"next":{"$ref":"#/$defs/n"}},"required":["v"],"additionalProperties":false}},"$ref":"#/$defs/n"}`,
			[]string{`{"v":1}`, `{"v":1,"next":{"v":2,"next":{"v":3}}}`}, []string{`{"v":1,"next":{}}`}},
		{`{"type":"object","properties":{"a":{"type":"integer"}}}`, []string{`{"a":1,"b":[1,{"c":null}]}`, `{"zz":true}`}, []string{`{"a":"x"}`, `{"a":1,"a":2}`}},
		{`{"type":"string","format":"date"}`, []string{`"2024-02-28"`}, []string{`"2024-13-01"`, `"2023-06-31"`, `"0000-01-01"`, `"x"`}},
		{`{"type":"object","maxProperties":0}`, []string{`{}`}, []string{`{"k":"v"}`}},
		{`{"type":"object","properties":{"a":{}},"maxProperties":1}`, []string{`{"a":1}`, `{"b":1}`}, []string{`{"a":1,"b":2}`}},
		{`{"const":"x"}`, []string{`"x"`}, []string{`"y"`}},
		// oneOf told apart by a required discriminator
		{`{"oneOf":[{"type":"object","properties":{"kind":{"const":"a"},"x":{"type":"integer"}},"required":["kind"]},` +
			`{"type":"object","properties":{"kind":{"enum":["b","c"]},"y":{"type":"string"}},"required":["kind","y"]},{"type":"string"}]}`,
			[]string{`{"kind":"a","x":1}`, `{"y":"s","kind":"c"}`, `"s"`, `{"kind":"a","y":"s"}`}, []string{`{"kind":"d","x":1}`, `{"kind":"b"}`, `{"x":1}`, `1`}},
		{`{"enum":[2.0,-3,1.5]}`, []string{`2.0`, `2`, `-3`, `-3.0`, `1.5`}, []string{`2.5`, `3`, `1`, `20`, `-30`}},
		{`{"type":["string","null"]}`, []string{`null`, `"a"`}, []string{`1`}},
		// draft 7: $ref stands alone; later drafts: the keywords beside it apply too
		{`{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"s":{"type":"string"}},"properties":{"a":{"$ref":"#/definitions/s","maxLength":1}}}`,
			[]string{`{"a":"abc"}`, `{"a":"x"}`}, []string{`{"a":1}`}},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema","$defs":{"s":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/s","maxLength":1}}}`,
			[]string{`{"a":"x"}`}, []string{`{"a":"abc"}`, `{"a":1}`}},
		{`{"definitions":{"s":{"type":"string"}},"properties":{"a":{"$ref":"#/definitions/s","maxLength":1}}}`,
			[]string{`{"a":"x"}`}, []string{`{"a":"abc"}`}},
	}
	for _, tc := range cases {
		g := mustCompile(t, tc.schema)
		for _, s := range tc.ok {
			if !g.Validate([]byte(s)) {
				t.Errorf("%s: refused valid %s", tc.schema, s)
			}
		}
		for _, s := range tc.bad {
			if g.Validate([]byte(s)) {
				t.Errorf("%s: accepted invalid %s", tc.schema, s)
			}
		}
	}
}

func TestCompileErrors(t *testing.T) {
	for _, s := range []string{
		`{"type":"string","pattern":"(a"}`,
		`{"type":"string","pattern":"(?=a)b"}`,
		`{"not":{"type":"string"}}`,
		`{"$ref":"#"}`,
		`{"type":"object","properties":{"a":{"$ref":"#"}},"required":["a"]}`,
		`{"$ref":"http://example.com/x.json"}`,
		`{"type":"frob"}`,
		`{"type":"array","uniqueItems":true}`,
		`{"oneOf":[{"properties":{"kind":{"const":"a"}},"required":["kind"]},{"properties":{"kind":{"const":"b"}},"required":["kind"]}]}`, // both take a string
		`{"oneOf":[{"type":"object","properties":{"k":{"const":"a"}},"required":["k"]},{"type":"object","properties":{"k":{"const":"a"}},"required":["k"]}]}`,
		`{"oneOf":[{"type":"object","properties":{"k":{"const":"a"}}},{"type":"object","properties":{"k":{"const":"b"}},"required":["k"]}]}`,
		`{"oneOf":[{"type":"object","properties":{"k":{"const":2}},"required":["k"]},{"type":"object","properties":{"k":{"const":2.0}},"required":["k"]}]}`,
		`[1,2]`,
		`{"type":"object"`,
	} {
		_, err := Compile([]byte(s))
		var ce *CompileError
		if !errors.As(err, &ce) {
			t.Errorf("%s: got %v, want a CompileError", s, err)
		}
	}
}
