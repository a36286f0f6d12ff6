package durable

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFileReplacesAndLeavesNoTemporary(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	p := filepath.Join(dir, "x.json")
	for _, want := range []string{"first", "second"} {
		if err := WriteFile(p, []byte(want), 0o700); err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(p); err != nil || string(got) != want {
			t.Fatalf("read %q, %v; want %q", got, err, want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("folder holds %d entries, want the file alone", len(entries))
	}
}

func TestFillFailureKeepsTheOldFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "w.safetensors")
	if err := WriteFile(p, []byte("old"), 0o700); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("disk full")
	if err := Fill(p, func(tmp string) error { os.WriteFile(tmp, []byte("par"), 0o644); return boom }); !errors.Is(err, boom) {
		t.Fatalf("Fill = %v, want the writer's error", err)
	}
	if got, _ := os.ReadFile(p); string(got) != "old" {
		t.Fatalf("after a failed write the file holds %q", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("a failed write left %d entries", len(entries))
	}
}

func TestReplaceDirSwapsWholeFolders(t *testing.T) {
	root := t.TempDir()
	dst := filepath.Join(root, "adapter")
	for i, body := range []string{"v1", "v2"} {
		tmp, err := os.MkdirTemp(root, ".adapter-")
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(tmp, "w"), []byte(body), 0o644)
		if i == 1 {
			os.WriteFile(filepath.Join(tmp, "extra"), nil, 0o644)
		}
		if err := ReplaceDir(tmp, dst); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(filepath.Join(dst, "w")); string(got) != body {
			t.Fatalf("dst holds %q, want %q", got, body)
		}
	}
	if entries, _ := os.ReadDir(root); len(entries) != 1 {
		t.Fatalf("root holds %d entries, want only the adapter", len(entries))
	}
}
