package chattemplate

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"perch/engine/tokenizer"
	"perch/engine/tokenizer/realvocab"
)

// The published Gemma-4 chat templates differ by size (testdata/README.md):
// with thinking off, the 26B/31B template opens an empty thought channel
// after "<|turn>model\n"; the E2B/E4B one does not.
const (
	smallTemplate = "gemma4-e2b-e4b.jinja"
	largeTemplate = "gemma4-26b-31b.jinja"
	emptyThought  = "<|turn>model\n<|channel>thought\n<channel|>"
)

func loadTestTemplate(t *testing.T, name string) *Template {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := New(string(src))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return tmpl
}

// TestSizeTemplates: both templates render like Python's Jinja2, thinking
// on, off and unset; the empty thought channel appears exactly where the
// 26B/31B template writes it; and the Gemma-4 test tokenizer at full
// vocabulary gives the oracle's ids for every rendered prompt.
func TestSizeTemplates(t *testing.T) {
	cases := readCases(t, "testdata/template-sizes.json")
	tmpls := map[string]*Template{smallTemplate: loadTestTemplate(t, smallTemplate), largeTemplate: loadTestTemplate(t, largeTemplate)}
	var tok *tokenizer.Tokenizer
	if dir := realvocab.Require(t, "../..", realvocab.Gemma4); dir != "" {
		var err error
		if tok, err = tokenizer.Load(dir); err != nil {
			t.Fatal(err)
		}
	}
	sizes := map[string]int{}
	for _, c := range cases {
		tmpl := tmpls[c.Template]
		if tmpl == nil {
			t.Fatalf("%s: unknown template %q", c.Name, c.Template)
		}
		t.Run(c.Name, func(t *testing.T) {
			in := inputOf(t, c)
			in.BOSToken, in.EOSToken = "<bos>", "<eos>"
			got, err := tmpl.Render(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.Rendered {
				t.Fatalf("rendered\n%q\nJinja2:\n%q", got, c.Rendered)
			}
			thinking, _ := c.TemplateKwargs["enable_thinking"].(bool)
			toolTurn := strings.HasSuffix(got, "<tool_response|>") || strings.HasSuffix(got, "<|channel>thought\n")
			wantEmpty := c.Template == largeTemplate && !thinking && !toolTurn
			if strings.HasSuffix(got, emptyThought) != wantEmpty {
				t.Errorf("empty thought channel %v, want %v:\n%q", !wantEmpty, wantEmpty, got)
			}
			ids := tok.Encode(got, false)
			if !slices.Equal(ids, c.IDs) {
				t.Fatalf("%d ids differ from the oracle's %d", len(ids), len(c.IDs))
			}
			t.Logf("%d ids match the oracle; ends %q", len(ids), tail(got, 40))
			sizes[c.Template]++
		})
	}
	t.Logf("real Gemma-4 templates at full vocabulary: %d E2B/E4B and %d 26B/31B prompts match Jinja2 and the tokenizer oracle",
		sizes[smallTemplate], sizes[largeTemplate])
}

// tail is s's last n bytes.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}
