package mlx

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCandidatesOrder(t *testing.T) {
	t.Setenv("HOMEBREW_PREFIX", "")
	got := candidates("/opt/mlx/lib", "/Applications/Perch.app/Contents/MacOS/perch", "darwin")
	want := []string{
		"/opt/mlx/lib",
		"/Applications/Perch.app/Contents/Frameworks",
		"/opt/homebrew/lib",
		"/usr/local/lib",
	}
	if len(got) != len(want) {
		t.Fatalf("got %d candidates %+v, want %v", len(got), got, want)
	}
	for i, c := range got {
		if c.dir != want[i] {
			t.Errorf("candidate %d: dir %q, want %q", i, c.dir, want[i])
		}
	}

	// An explicit file in MLX_LIB_PATH is used as is; Linux has no /opt/homebrew.
	f := filepath.Join(t.TempDir(), "libmlxc.so")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got = candidates(f, "", "linux")
	if got[0].file != f || got[0].dir != "" {
		t.Errorf("MLX_LIB_PATH file: got %+v", got[0])
	}
	for _, c := range got {
		if c.dir == "/opt/homebrew/lib" {
			t.Errorf("linux candidates include %q", c.dir)
		}
	}
}

func TestLoadFromNotFound(t *testing.T) {
	dir := t.TempDir()
	_, err := loadFrom([]candidate{{label: dir, dir: dir}}, "")
	if err == nil {
		t.Fatal("loadFrom on an empty directory succeeded")
	}
	msg := err.Error()
	for _, want := range []string{"libmlxc not found (looked in: " + dir, "use --backend go or brew install mlx-c"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
}

func TestLoadFromUnloadable(t *testing.T) {
	dir := t.TempDir()
	bogus := filepath.Join(dir, libName("linux"))
	if err := os.WriteFile(bogus, []byte("not a shared library"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := loadFrom([]candidate{{label: bogus, file: bogus}}, "")
	if err == nil || !strings.Contains(err.Error(), "found but not loadable") || !strings.Contains(err.Error(), bogus) {
		t.Fatalf("got %v, want a 'found but not loadable' error naming %s", err, bogus)
	}
}

func TestVersionAtLeast(t *testing.T) {
	for _, c := range []struct {
		v    string
		want bool
	}{
		{"0.31.2", true}, {"0.31.0", true}, {"0.32.0.dev20260101", true}, {"1.0.0", true},
		{"0.30.6", false}, {"0.9.1", false}, {"", false}, {"garbage", false},
	} {
		if got := versionAtLeast(c.v, [2]int{0, 31}); got != c.want {
			t.Errorf("versionAtLeast(%q) = %v, want %v", c.v, got, c.want)
		}
	}
}
