package jinja

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"
)

// jinja-golden.json is written by testdata/oracle.py: Python's Jinja2,
// configured as Hugging Face's apply_chat_template configures it, rendering
// testdata/cases.json.
type oracleFile struct {
	Oracle string `json:"oracle"`
	Now    string `json:"now"`
	Cases  []struct {
		Name     string          `json:"name"`
		Template string          `json:"template"`
		Vars     json.RawMessage `json:"vars"`
		Output   *string         `json:"output"`
		Error    bool            `json:"error"`
		PyError  string          `json:"python_error"`
	} `json:"cases"`
}

func render(t testing.TB, src string, vars map[string]Value, now time.Time, lim Limits) (string, error) {
	t.Helper()
	tmpl, err := Parse(src)
	if err != nil {
		return "", err
	}
	return tmpl.Render(context.Background(), vars, now, lim)
}

func TestPythonJinja2Oracle(t *testing.T) {
	data, err := os.ReadFile("testdata/jinja-golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var f oracleFile
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	now, err := time.Parse("2006-01-02T15:04:05", f.Now)
	if err != nil {
		t.Fatal(err)
	}
	ok := 0
	for _, c := range f.Cases {
		v, err := FromJSON(c.Vars)
		if err != nil {
			t.Fatalf("%s: vars: %v", c.Name, err)
		}
		vars := map[string]Value{}
		d := v.(*Dict)
		for i, k := range d.keys {
			vars[k.(string)] = d.vals[i]
		}
		got, err := render(t, c.Template, vars, now, Limits{})
		switch {
		case c.Error && err == nil:
			t.Errorf("%s: rendered %q, Python raised %s", c.Name, got, c.PyError)
		case !c.Error && err != nil:
			t.Errorf("%s: %v\nwant %q", c.Name, err, *c.Output)
		case !c.Error && got != *c.Output:
			t.Errorf("%s:\n got  %q\n want %q", c.Name, got, *c.Output)
		default:
			ok++
		}
	}
	t.Logf("%d/%d cases agree with %s (%d are expected errors)", ok, len(f.Cases), f.Oracle, countErrors(f))
}

func countErrors(f oracleFile) int {
	n := 0
	for _, c := range f.Cases {
		if c.Error {
			n++
		}
	}
	return n
}
