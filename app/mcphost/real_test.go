package mcphost

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"perch/app/mcphost/mcptest"
)

// TestRealServers: the reference servers from npm start, list their tools
// and run calls; server-filesystem stays inside its folder, and
// server-everything sees only the environment it was given.
func TestRealServers(t *testing.T) {
	srv := mcptest.Install(t)
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "notes.txt"), []byte("perch was here"), 0o644)
	h, err := NewHost([]Config{
		{Name: "everything", Command: srv.Everything, Env: map[string]string{"GIVEN": "yes"}},
		{Name: "fs", Command: append(srv.Filesystem, root)},
	}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	t.Setenv("PERCH_SECRET_TOKEN", "leak")
	tools, errs := h.Tools(context.Background())
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	have := map[string]bool{}
	for _, tl := range tools {
		have[tl.Server+"/"+tl.Name] = true
	}
	t.Logf("%d tools: %v", len(tools), have)
	for _, want := range []string{"everything/echo", "fs/read_text_file", "fs/write_file"} {
		if !have[want] {
			t.Errorf("no %s among the tools", want)
		}
	}
	if r := h.Call(context.Background(), "everything", "echo", json.RawMessage(`{"message":"hi"}`)); r.IsError || !strings.Contains(r.Content, "hi") {
		t.Errorf("echo: %+v", r)
	}
	r := h.Call(context.Background(), "fs", "read_text_file", json.RawMessage(`{"path":"`+filepath.Join(root, "notes.txt")+`"}`))
	if r.IsError || r.Content != "perch was here" {
		t.Errorf("read_text_file: %+v", r)
	}
	if r := h.Call(context.Background(), "fs", "read_text_file", json.RawMessage(`{"path":"/etc/hostname"}`)); !r.IsError {
		t.Errorf("read outside the folder: %+v", r)
	}
	if have["everything/get-env"] || have["everything/printEnv"] {
		name := "get-env"
		if have["everything/printEnv"] {
			name = "printEnv"
		}
		r := h.Call(context.Background(), "everything", name, nil)
		if !strings.Contains(r.Content, "GIVEN") || strings.Contains(r.Content, "PERCH_SECRET_TOKEN") || strings.Contains(r.Content, `"HOME"`) {
			t.Errorf("the server's environment: %.300s", r.Content)
		}
	}
}
