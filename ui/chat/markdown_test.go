package chat

import (
	"strings"
	"testing"
)

func TestSplitMarkdown(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want []segment
	}{
		{"prose only", "# Hi\n\nSome *text*.", []segment{{text: "# Hi\n\nSome *text*."}}},
		{"code between prose", "Run:\n\n```go\nfmt.Println(1)\n```\n\nDone.",
			[]segment{{text: "Run:"}, {code: true, lang: "go", text: "fmt.Println(1)"}, {text: "Done."}}},
		{"open fence while streaming", "Here:\n```python\nprint(1)\nprint(",
			[]segment{{text: "Here:"}, {code: true, lang: "python", text: "print(1)\nprint("}}},
		{"tilde fence, longer close", "~~~\na\n~~~~\nb", []segment{{code: true, text: "a"}, {text: "b"}}},
		{"shorter fence does not close", "````\n```\nx\n````", []segment{{code: true, text: "```\nx"}}},
		{"indented four is not a fence", "    ```\nx", []segment{{text: "    ```\nx"}}},
		{"backtick in info is inline code", "```a`b```", []segment{{text: "```a`b```"}}},
		{"empty block", "```\n```", []segment{{code: true}}},
		{"crlf", "```sh\r\nls\r\n```\r\n", []segment{{code: true, lang: "sh", text: "ls\r"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := splitMarkdown(tc.in)
			if len(got) != len(tc.want) {
				t.Fatalf("splitMarkdown(%q) = %+v, want %+v", tc.in, got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("segment %d = %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// FuzzSplitMarkdown: any model output splits without panicking, every
// segment is a piece of the input (lines kept verbatim) and prose is never
// blank.
func FuzzSplitMarkdown(f *testing.F) {
	for _, s := range []string{"", "```", "```go\nx\n```\ny", "~~~~\n~~~\n", "   ```\n", "a\n```b`\n", "\xff```\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		segs := splitMarkdown(s)
		total := 0
		for _, seg := range segs {
			total += len(seg.text)
			if !seg.code && strings.TrimSpace(seg.text) == "" {
				t.Fatalf("empty prose segment in %q", s)
			}
			if !strings.Contains(s, seg.text) {
				t.Fatalf("segment %q not in input %q", seg.text, s)
			}
		}
		if total > len(s) {
			t.Fatalf("segments longer than input: %d > %d", total, len(s))
		}
	})
}
