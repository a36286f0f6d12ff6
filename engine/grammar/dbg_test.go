package grammar

import (
	"encoding/json"
	"os"
	"testing"
)

func TestDbgOne(t *testing.T) {
	data, _ := os.ReadFile("/tmp/maskbench/data/" + os.Getenv("F"))
	var doc struct {
		Schema json.RawMessage `json:"schema"`
		Tests  []struct {
			Valid bool            `json:"valid"`
			Data  json.RawMessage `json:"data"`
		} `json:"tests"`
	}
	json.Unmarshal(data, &doc)
	g, err := Compile(doc.Schema)
	if err != nil {
		t.Fatal(err)
	}
	for i, tc := range doc.Tests {
		inst, _ := Canonical(tc.Data)
		m := &matcher{g: g}
		states := []*stack{{f: frame{k: fValue, n: g.root}}}
		for p, c := range inst {
			var next []*stack
			for _, s := range states {
				next = m.step(s, c, next)
			}
			if len(next) == 0 {
				t.Logf("test %d valid=%v: stuck at %d: %s<<HERE>>%s", i, tc.Valid, p, inst[max(0, p-150):p], inst[p:min(len(inst), p+40)])
				break
			}
			states = next
		}
	}
}
