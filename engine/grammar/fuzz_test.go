package grammar

import (
	"testing"
	"time"
)

// FuzzCompile: any bytes as a schema give a grammar or a CompileError,
// never a panic, within the compile limits; a grammar then validates any
// instance without panicking.
func FuzzCompile(f *testing.F) {
	for _, s := range []string{
		`{"type":"object","properties":{"a":{"type":"string","pattern":"^a+$"}},"required":["a"]}`,
		`{"anyOf":[{"type":"integer","minimum":3},{"enum":["x",null,[1]]}]}`,
		`{"$defs":{"n":{"properties":{"k":{"$ref":"#/$defs/n"}}}},"$ref":"#/$defs/n"}`,
		`{"allOf":[{"type":"array","prefixItems":[{"const":1}]},{"maxItems":2}]}`,
		`{"$ref":"#"}`, `true`, `false`, `{"type":"string","format":"date-time","maxLength":30}`,
	} {
		f.Add([]byte(s), []byte(`{"a":"aa"}`))
	}
	f.Fuzz(func(t *testing.T, schema, instance []byte) {
		start := time.Now()
		g, err := Compile(schema)
		if d := time.Since(start); d > MaxCompileTime+time.Second {
			t.Fatalf("compile took %v", d)
		}
		if err != nil {
			if _, ok := err.(*CompileError); !ok {
				t.Fatalf("error %v is not a CompileError", err)
			}
			return
		}
		g.Validate(instance)
	})
}
