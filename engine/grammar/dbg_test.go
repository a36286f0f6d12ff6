package grammar

import (
	"strconv"
	"strings"
	"encoding/json"
	"os"
	"testing"
)

func TestDbgAll(t *testing.T) {
	list, _ := os.ReadFile("/tmp/i19m/refused.txt")
	for _, line := range strings.Split(strings.TrimSpace(string(list)), "\n") {
		f, k, _ := strings.Cut(line, " ")
		want, _ := strconv.Atoi(k)
		one(t, f, want)
	}
}

func one(t *testing.T, f string, want int) {
	data, _ := os.ReadFile("/tmp/maskbench/data/" + f)
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
		t.Log(f, err)
		return
	}
	for i, tc := range doc.Tests {
		if i != want {
			continue
		}
		inst, _ := Canonical(tc.Data)
		m := &matcher{g: g}
		states := []*stack{{f: frame{k: fValue, n: g.root}}}
		for p, c := range inst {
			var next []*stack
			for _, s := range states {
				next = m.step(s, c, next)
			}
			if len(next) == 0 {
				t.Logf("%s test %d valid=%v: stuck at %d: %s<<HERE>>%s", f, i, tc.Valid, p, inst[max(0, p-150):p], inst[p:min(len(inst), p+40)])
				break
			}
			states = next
		}
	}
}
