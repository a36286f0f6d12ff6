package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestSchemaBadInput: each hostile schema or tool list is refused with a
// SchemaError that says why, quickly, before anything is queued.
func TestSchemaBadInput(t *testing.T) {
	e := openTiny(t, "text-tiny", Options{})
	bigEnum := make([]string, 20000) // 20,000 values in about 160 KB: under the byte limit, over the enum one
	for i := range bigEnum {
		bigEnum[i] = fmt.Sprintf("%q", fmt.Sprint("v", i))
	}
	manyTools := make([]Tool, 1000)
	for i := range manyTools {
		manyTools[i] = Tool{Name: fmt.Sprint("f", i), Parameters: []byte(`{"type":"object"}`)}
	}
	huge := `{"type":"object","description":"` + strings.Repeat("x", 1<<20) + `"}`
	for _, tc := range []struct {
		name, want string
		req        Request
	}{
		{"not JSON", "not valid JSON", Request{ResponseSchema: []byte(`{"type":`)}},
		{"1 MB schema", "byte limit", Request{ResponseSchema: []byte(huge)}},
		{"recursive $ref, no base case", "no base case", Request{ResponseSchema: []byte(`{"$ref":"#"}`)}},
		{"recursive required", "no finite JSON value", Request{ResponseSchema: []byte(`{"type":"object","properties":{"a":{"$ref":"#"}},"required":["a"]}`)}},
		{"pattern not a regex", "pattern", Request{ResponseSchema: []byte(`{"type":"string","pattern":"([a-z"}`)}},
		{"enormous enum", "over the limit", Request{ResponseSchema: []byte(`{"enum":[` + strings.Join(bigEnum, ",") + `]}`)}},
		{"unsupported keyword", `"not"`, Request{ResponseSchema: []byte(`{"not":{"type":"null"}}`)}},
		{"1000 tools", "over the limit", Request{Tools: manyTools, ToolChoice: ToolChoice{Mode: ToolRequired}}},
		{"unknown function", "not among the tools", Request{Tools: manyTools[:2], ToolChoice: ToolChoice{Mode: ToolFunction, Name: "nope"}}},
	} {
		tc.req.Messages = []Message{Text(RoleUser, "hi")}
		start := time.Now()
		_, err := e.Generate(context.Background(), tc.req)
		var se *SchemaError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want a SchemaError mentioning %q", tc.name, err, tc.want)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: took %v", tc.name, d)
		}
	}
}
