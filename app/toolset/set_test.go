package toolset

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"perch/app/mcphost"
	"perch/app/mcphost/mcptest"
)

func TestMain(m *testing.M) {
	mcptest.MaybeServe()
	os.Exit(m.Run())
}

// TestCommandLineReadsBack: a command shown on Settings → Tools splits
// back into the same words.
func TestCommandLineReadsBack(t *testing.T) {
	for _, words := range [][]string{{"npx", "-y", "@modelcontextprotocol/server-filesystem", "/home/me/My Notes"},
		{"sh", "-c", `echo "it's" >&2; exit 3`}, {"a", "", `back\slash`}} {
		got, err := mcphost.SplitCommand(commandLine(words))
		if err != nil || !reflect.DeepEqual(got, words) {
			t.Errorf("%q shown as %s reads back as %q (%v)", words, commandLine(words), got, err)
		}
	}
}

// TestServersAddCheckDisableReopen: two servers set up as in Settings →
// Tools, one that works and one that exits at start; the working one's
// tools are offered, the failed one says why with its stderr; the setup
// and approvals survive a reopen; disabling and removing take effect.
func TestServersAddCheckDisableReopen(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	okCmd, okEnv := mcptest.Command("calm", "")
	badCmd, badEnv := mcptest.Command("exit", "")
	if err := s.Add("notes", commandLine(okCmd), okEnv, ""); err != nil {
		t.Fatal(err)
	}
	if err := s.Add("weather", commandLine(badCmd), badEnv, ""); err != nil {
		t.Fatal(err)
	}
	if err := s.Add("notes", "true", nil, ""); err == nil {
		t.Fatal("a second server named notes was accepted")
	}
	if err := s.Add("far", "", nil, "http://example.com/mcp"); err == nil {
		t.Fatal("a server off this machine was accepted")
	}
	ctx := context.Background()
	tools := s.Tools(ctx, []string{"notes", "weather"})
	if len(tools) == 0 || tools[0].Server != "notes" {
		t.Fatalf("tools %+v", tools)
	}
	if err := s.Check(ctx, "weather"); err == nil {
		t.Fatal("the exiting server checked fine")
	}
	list := s.List()
	if len(list) != 2 || list[0].State != "ready" || len(list[0].Tools) == 0 || list[1].State != "failed" ||
		list[1].Err == "" || !strings.Contains(list[1].Stderr, "no configuration file found") {
		t.Fatalf("list %+v", list)
	}
	// A tool whose schema the grammar cannot enforce is marked with the
	// reason; the others are not.
	marks := map[string]string{}
	for _, ti := range list[0].Tools {
		marks[ti.Name] = ti.Unchecked
	}
	if marks["echo"] != "" || !strings.Contains(marks["half"], "multipleOf") {
		t.Fatalf("unchecked marks %q", marks)
	}
	if err := s.Approvals().Allow("notes", "echo"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetEnabled("weather", false); err != nil {
		t.Fatal(err)
	}
	if got := s.Servers(); len(got) != 1 || got[0].Name != "notes" || got[0].State != "ready" {
		t.Fatalf("enabled servers %+v", got)
	}
	s.Close()

	s, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	list = s.List()
	if len(list) != 2 || !list[0].Enabled || list[1].Enabled || list[1].State != "disabled" ||
		len(list[0].Always) != 1 || list[0].Always[0] != "echo" {
		t.Fatalf("after reopen %+v", list)
	}
	if err := s.Revoke("notes", "echo"); err != nil || s.Approvals().Allowed("notes", "echo") {
		t.Fatalf("revoke: %v", err)
	}
	if err := s.Remove("weather"); err != nil || len(s.List()) != 1 {
		t.Fatalf("remove: %v, %d left", err, len(s.List()))
	}
	if r := s.Call(ctx, "weather", "x", nil); !r.IsError {
		t.Fatal("a removed server ran a call")
	}
}

// TestBadConfigIsAClearError: a tools file that is not JSON, names a
// server twice, has a bad setup, is too big or is not a regular file is
// refused with a sentence.
func TestBadConfigIsAClearError(t *testing.T) {
	for name, data := range map[string]string{
		"not json":  "{",
		"twice":     `{"servers":[{"name":"a","command":["x"]},{"name":"a","command":["y"]}]}`,
		"no setup":  `{"servers":[{"name":"a"}]}`,
		"off-host":  `{"servers":[{"name":"a","url":"http://10.0.0.1/"}]}`,
		"too large": `{"servers":[]}` + strings.Repeat(" ", maxConfig),
	} {
		if _, err := parseConfig([]byte(data)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, ConfigName), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("a folder as tools file: %v", err)
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(`{"servers":[{"name":"a","command":["x","y"],"env":{"K":"v"},"enabled":true}]}`))
	f.Add([]byte(`{"servers":[{"name":"b","url":"http://127.0.0.1:9/mcp"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := parseConfig(data)
		if err != nil {
			return
		}
		for _, e := range entries {
			if e.Check() != nil {
				t.Fatalf("accepted a bad setup %+v", e)
			}
		}
	})
}
