package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"perch/app/hub"
)

// cacheWithTinyModel lays out a Hugging Face cache holding the fixture
// model as org/tiny@main, the way huggingface_hub writes it.
func cacheWithTinyModel(t *testing.T) *hub.Hub {
	t.Helper()
	if _, err := os.Stat(filepath.Join(tinyModel, "config.json")); err != nil {
		t.Skipf("fixture model %s not present: %v", tinyModel, err)
	}
	h := hub.New()
	h.Dir = filepath.Join(t.TempDir(), "hub")
	h.Offline = true
	h.Memory = func() (hub.Budget, error) {
		return hub.Budget{TotalRAM: 64 << 30, Usable: 48 << 30, Source: "test budget"}, nil
	}
	commit := strings.Repeat("c0ffee", 6) + "c0ff"
	repo := filepath.Join(h.Dir, "models--org--tiny")
	snap := filepath.Join(repo, "snapshots", commit)
	os.MkdirAll(snap, 0o755)
	os.MkdirAll(filepath.Join(repo, "blobs"), 0o755)
	os.MkdirAll(filepath.Join(repo, "refs"), 0o755)
	entries, _ := os.ReadDir(tinyModel)
	for i, e := range entries {
		data, err := os.ReadFile(filepath.Join(tinyModel, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		blob := strings.Repeat("0", 38) + string(rune('a'+i/10)) + string(rune('0'+i%10))
		os.WriteFile(filepath.Join(repo, "blobs", blob), data, 0o644)
		os.Symlink("../../blobs/"+blob, filepath.Join(snap, e.Name()))
	}
	os.WriteFile(filepath.Join(repo, "refs", "main"), []byte(commit), 0o644)
	return h
}

func models(h *hub.Hub, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := runModels(args, h, &out, &errb)
	return code, out.String(), errb.String()
}

func TestModelsListFitRemove(t *testing.T) {
	h := cacheWithTinyModel(t)
	code, out, errs := models(h, "list")
	if code != 0 || !strings.Contains(out, "org/tiny") || !strings.Contains(out, "main") || !strings.Contains(out, "text+image+audio+video") || !strings.Contains(out, "ready") {
		t.Fatalf("list: %d\n%s%s", code, out, errs)
	}
	t.Logf("perch models list:\n%s", out)
	code, out, _ = models(h, "list", "--json")
	var list []hub.CachedModel
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) != 1 || !list[0].Complete || list[0].Size == 0 {
		t.Fatalf("list --json: %d %s", code, out)
	}
	code, out, _ = models(h, "list", "--catalog")
	if code != 0 || !strings.Contains(out, hub.DefaultModel().Repo) || !strings.Contains(out, "(default)") {
		t.Fatalf("list --catalog: %d\n%s", code, out)
	}
	t.Logf("perch models list --catalog:\n%s", out)

	for _, target := range []string{tinyModel, "org/tiny", "org/tiny@main"} {
		code, out, errs = models(h, "fit", target, "--context", "2048")
		if code != 0 || !strings.Contains(out, "KV cache") || !strings.Contains(out, "fits") || !strings.Contains(out, "test budget") {
			t.Fatalf("fit %s: %d\n%s%s", target, code, out, errs)
		}
	}
	t.Logf("perch models fit org/tiny --context 2048:\n%s", out)
	h.Memory = func() (hub.Budget, error) {
		return hub.Budget{TotalRAM: 1 << 20, Usable: 1 << 20, Source: "tiny budget"}, nil
	}
	if code, out, errs = models(h, "fit", "org/tiny"); code != 1 || !strings.Contains(errs, "does not fit") {
		t.Fatalf("fit over budget: %d\n%s%s", code, out, errs)
	}

	if code, out, errs = models(h, "pull", "org/tiny"); code != 0 || !strings.Contains(out, "already downloaded") {
		t.Fatalf("pull cached: %d %s %s", code, out, errs)
	}
	if code, _, errs = models(h, "pull", "org/absent"); code != 1 || !strings.Contains(errs, "HF_HUB_OFFLINE") {
		t.Fatalf("pull offline: %d %s", code, errs)
	}
	if code, out, errs = models(h, "rm", "org/tiny"); code != 0 || !strings.Contains(out, "removed org/tiny") {
		t.Fatalf("rm: %d %s %s", code, out, errs)
	}
	if code, _, errs = models(h, "rm", "org/tiny"); code != 1 || !strings.Contains(errs, "not in the Hugging Face cache") {
		t.Fatalf("rm again: %d %s", code, errs)
	}
	if code, out, _ = models(h, "list"); code != 0 || !strings.Contains(out, "no models") {
		t.Fatalf("list after rm: %s", out)
	}
}

func TestModelsUsageErrors(t *testing.T) {
	h := hub.New()
	h.Dir = t.TempDir()
	for _, args := range [][]string{{}, {"frobnicate"}, {"pull"}, {"pull", "a", "b"}, {"rm"}, {"fit"}} {
		if code, _, errs := models(h, args...); code != 2 || errs == "" {
			t.Errorf("%v: exit %d, stderr %q", args, code, errs)
		}
	}
	if code, _, errs := models(h, "pull", "../../etc"); code != 1 || !strings.Contains(errs, "unsafe name") {
		t.Errorf("hostile repo: %d %q", code, errs)
	}
}
