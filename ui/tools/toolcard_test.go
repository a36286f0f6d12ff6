package tools

import (
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"perch/ui"
)

// savePNG writes the window's picture where PERCH_TOOLS_SHOTS points
// (for looking at; nothing is compared).
func savePNG(t *testing.T, w fyne.Window, name string) {
	dir := os.Getenv("PERCH_TOOLS_SHOTS")
	if dir == "" {
		return
	}
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	png.Encode(f, w.Canvas().Capture())
}

// buttonNamed finds the button labelled text under root.
func buttonNamed(t *testing.T, root *fyne.Container, text string) *widget.Button {
	for _, o := range root.Objects {
		if b, ok := o.(*widget.Button); ok && b.Text == text {
			return b
		}
		if c, ok := o.(*fyne.Container); ok {
			if b := buttonNamed(t, c, text); b != nil {
				return b
			}
		}
	}
	return nil
}

func TestToolCallCardAnswers(t *testing.T) {
	a := test.NewTempApp(t)
	for _, tc := range []struct {
		button string
		want   ui.ToolAnswer
	}{{"Allow once", ui.ToolAllowOnce}, {"Always allow this tool", ui.ToolAllowAlways}, {"Deny", ui.ToolDeny}} {
		c := NewToolCallCard("read_text_file", "notes", `{"path":"/home/me/notes/owls.md"}`)
		got := ui.ToolAnswer(-1)
		c.OnAnswer = func(a ui.ToolAnswer) { got = a }
		w := a.NewWindow("tools")
		w.SetContent(c.Root)
		w.Resize(fyne.NewSize(520, 260))
		if tc.want == ui.ToolAllowOnce {
			savePNG(t, w, "tools-approve.png")
		}
		b := buttonNamed(t, c.Root, tc.button)
		if b == nil {
			t.Fatalf("no %q button", tc.button)
		}
		test.Tap(b)
		if got != tc.want || c.Waiting() {
			t.Fatalf("%s: answer %v, still waiting %v", tc.button, got, c.Waiting())
		}
		if tc.want == ui.ToolAllowOnce {
			c.SetResult("# Owls\n[click me](https://example.com)", false, false)
			if c.Result.Text != "# Owls\n[click me](https://example.com)" || c.Fold.Items[0].Open {
				t.Fatalf("result shown as %q, open %v: want the plain text, folded", c.Result.Text, c.Fold.Items[0].Open)
			}
			c.Fold.OpenAll()
			c.Root.Refresh()
			savePNG(t, w, "tools-result.png")
		}
		w.Close()
	}
}
