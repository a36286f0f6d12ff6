package tools

import (
	"context"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"perch/ui"
	"perch/ui/internal/fake"
)

// fakeTools is Settings → Tools over memory.
type fakeTools struct {
	servers []ui.ToolServerInfo
	calls   []string
}

func (f *fakeTools) List() []ui.ToolServerInfo { return f.servers }

func (f *fakeTools) Add(name, command string, env map[string]string, url string) error {
	f.calls = append(f.calls, "add "+name+" "+command)
	f.servers = append(f.servers, ui.ToolServerInfo{Name: name, Setup: command, Enabled: true, State: "stopped"})
	return nil
}

func (f *fakeTools) SetEnabled(name string, on bool) error {
	for i := range f.servers {
		if f.servers[i].Name == name {
			f.servers[i].Enabled = on
		}
	}
	f.calls = append(f.calls, "enable "+name+" "+map[bool]string{true: "on", false: "off"}[on])
	return nil
}

func (f *fakeTools) Remove(name string) error { f.calls = append(f.calls, "remove "+name); return nil }

func (f *fakeTools) Check(ctx context.Context, name string) error {
	f.calls = append(f.calls, "check "+name)
	return nil
}

func (f *fakeTools) Revoke(server, tool string) error {
	f.calls = append(f.calls, "revoke "+server+" "+tool)
	for i := range f.servers {
		if f.servers[i].Name == server {
			f.servers[i].Always = nil
		}
	}
	return nil
}

func labelsUnder(o fyne.CanvasObject) []string {
	var out []string
	switch o := o.(type) {
	case *widget.Label:
		out = append(out, o.Text)
	case *widget.RichText:
		out = append(out, o.String())
	case *widget.Check:
		out = append(out, o.Text)
	case *fyne.Container:
		for _, c := range o.Objects {
			out = append(out, labelsUnder(c)...)
		}
	case *widget.Accordion:
		for _, it := range o.Items {
			out = append(out, labelsUnder(it.Detail)...)
		}
	}
	return out
}

// TestToolsPage: two servers, one failed with its reason and stderr; the
// ready one's tools with descriptions; disabling and revoking reach the
// tool settings and the page shows the change.
func TestToolsPage(t *testing.T) {
	ft := &fakeTools{servers: []ui.ToolServerInfo{
		{Name: "notes", Setup: "npx -y @modelcontextprotocol/server-filesystem /home/me/Notes", Enabled: true, State: "ready",
			Tools: []ui.ToolInfo{{Name: "read_text_file", Description: "Read a file as text"}, {Name: "list_directory", Description: "List a folder"},
				{Name: "search", Description: "Search the notes", Unchecked: `"uniqueItems" is not supported`}}, Always: []string{"list_directory"}},
		{Name: "weather", Setup: "weather-mcp --units metric", Enabled: true, State: "failed",
			Err: "the server exited before it answered (exit status 3)", Stderr: "no configuration file found, giving up"},
	}}
	h := fake.NewEnv(t)
	h.Tools = ft
	p := NewPage(h.Env, h.Win)
	h.Show(p.Root)
	p.Reload()
	all := strings.Join(labelsUnder(p.list), "\n")
	for _, want := range []string{"Ready · 3 tools", "Failed", `search  Search the notes  · arguments not checked: "uniqueItems" is not supported`, "the server exited before it answered (exit status 3)",
		"no configuration file found, giving up", "read_text_file  Read a file as text", "Always allowed: list_directory"} {
		if !strings.Contains(all, want) {
			t.Errorf("%q not shown in:\n%s", want, all)
		}
	}
	test.Tap(fake.VisibleButton(p.list, "Revoke"))
	if strings.Contains(strings.Join(labelsUnder(p.list), "\n"), "Always allowed") {
		t.Fatal("the revoked tool still shows")
	}
	var weatherOn *widget.Check
	var walk func(o fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		if c, ok := o.(*fyne.Container); ok {
			for _, x := range c.Objects {
				walk(x)
			}
		}
		if c, ok := o.(*widget.Check); ok && c.Text == "Enabled" {
			weatherOn = c // the last one: weather's
		}
	}
	walk(p.list)
	test.Tap(weatherOn)
	if got := strings.Join(ft.calls, "; "); got != "revoke notes list_directory; enable weather off" {
		t.Fatalf("calls %q", got)
	}
	if parsed, err := parseEnv("A=1\n\n B = two=2 \n"); err != nil || parsed["A"] != "1" || parsed["B"] != " two=2" {
		t.Fatalf("parseEnv = %v, %v", parsed, err)
	}
	if _, err := parseEnv("no equals"); err == nil {
		t.Fatal("a line without = was taken")
	}
}
