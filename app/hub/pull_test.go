package hub

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

func tinyConfig() []byte {
	return catalogConfig(family{64, 6, 128, 2, 1, 0, 8, 2, 16, 3, 4096, true, false, nil, siglipSmall, conformer, 4})
}

func randomBytes(n int, seed int64) []byte {
	b := make([]byte, n)
	rand.New(rand.NewSource(seed)).Read(b)
	return b
}

func modelFiles() map[string][]byte {
	return map[string][]byte{
		"config.json":       tinyConfig(),
		"tokenizer.json":    []byte(`{"model":{"type":"BPE"}}`),
		"model.safetensors": randomBytes(300_000, 1),
		"README.md":         []byte("# not downloaded"),
	}
}

func testHub(t *testing.T, fh *fakeHub) *Hub {
	return &Hub{
		Dir: filepath.Join(t.TempDir(), "hub"), Endpoint: fh.hub.URL, Token: "hf_secret",
		IdleTimeout: 5 * time.Second, MaxAttempts: 1,
		DiskFree: func(string) (int64, error) { return 1 << 40, nil },
		Memory:   func() (Budget, error) { return Budget{TotalRAM: 1 << 40, Usable: 1 << 40, Source: "test"}, nil },
	}
}

// tree lists every path under dir (links shown with their targets).
func tree(t *testing.T, dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if target, err := os.Readlink(p); err == nil {
			rel += " -> " + target
		}
		out = append(out, rel)
		return nil
	})
	sort.Strings(out)
	return out
}

func TestPullWritesHFCacheLayout(t *testing.T) {
	fh := newFakeHub(t, modelFiles(), "model.safetensors")
	h := testHub(t, fh)
	var last Progress
	dir, err := h.Pull(context.Background(), "org/model", "main", func(p Progress) { last = p })
	if err != nil {
		t.Fatal(err)
	}
	repoDir := filepath.Join(h.Dir, "models--org--model")
	if want := filepath.Join(repoDir, "snapshots", fh.commit); dir != want {
		t.Fatalf("snapshot dir %s, want %s", dir, want)
	}
	for _, name := range []string{"config.json", "tokenizer.json", "model.safetensors"} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !bytes.Equal(got, fh.files[name]) {
			t.Fatalf("%s: content differs (err %v)", name, err)
		}
		target, err := os.Readlink(filepath.Join(dir, name))
		if want := "../../blobs/" + fh.blob(name); err != nil || target != want {
			t.Fatalf("%s links to %q, want relative %q", name, target, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "README.md")); err == nil {
		t.Fatal("README.md should not be downloaded")
	}
	ref, _ := os.ReadFile(filepath.Join(repoDir, "refs", "main"))
	if string(ref) != fh.commit {
		t.Fatalf("refs/main = %q", ref)
	}
	for _, r := range fh.reqs() {
		if r.Host == "cdn" && r.Auth != "" {
			t.Fatalf("the CDN hop got Authorization %q", r.Auth)
		}
		if r.Host == "hub" && r.Auth != "Bearer hf_secret" {
			t.Fatalf("the Hub request %s lacks the token", r.Path)
		}
	}
	if fh.count("/blob/model.safetensors") != 1 {
		t.Fatalf("LFS file not fetched through the CDN: %+v", fh.reqs())
	}
	if last.Stage != StageDone || last.BytesDone != last.BytesTotal || last.BytesTotal == 0 {
		t.Fatalf("last progress %+v", last)
	}
	t.Logf("layout:\n  %s", strings.Join(tree(t, repoDir), "\n  "))
}

func TestPullResumesAfterDroppedConnection(t *testing.T) {
	fh := newFakeHub(t, modelFiles(), "model.safetensors")
	h := testHub(t, fh)
	fh.dropAfter["model.safetensors"] = 120_000
	_, err := h.Pull(context.Background(), "org/model", "main", nil)
	if err == nil || !strings.Contains(err.Error(), "pull again to resume") {
		t.Fatalf("want a resumable error, got %v", err)
	}
	blob := filepath.Join(h.Dir, "models--org--model", "blobs", fh.blob("model.safetensors"))
	st, err := os.Stat(blob + ".incomplete")
	if err != nil || st.Size() == 0 || st.Size() > 120_000 {
		t.Fatalf(".incomplete after the drop: %v, size %d", err, st.Size())
	}
	if _, err := os.Stat(blob); err == nil {
		t.Fatal("a partial blob was published")
	}
	if _, err := os.Stat(filepath.Join(h.Dir, "models--org--model", "refs", "main")); err == nil {
		t.Fatal("refs/main written for an incomplete pull")
	}
	partial := st.Size()

	dir, err := h.Pull(context.Background(), "org/model", "main", nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "model.safetensors"))
	if !bytes.Equal(got, fh.files["model.safetensors"]) {
		t.Fatal("resumed file differs")
	}
	var ranges []string
	for _, r := range fh.reqs() {
		if r.Host == "cdn" {
			ranges = append(ranges, r.Range)
		}
	}
	want := []string{"", "bytes=" + strconv.FormatInt(partial, 10) + "-"}
	if strings.Join(ranges, ",") != strings.Join(want, ",") {
		t.Fatalf("CDN Range headers %q, want %q", ranges, want)
	}
	t.Logf("dropped at %d bytes, resumed with %q", partial, ranges[1])
}

func TestPullRetriesInOneCall(t *testing.T) {
	fh := newFakeHub(t, modelFiles(), "model.safetensors")
	h := testHub(t, fh)
	h.MaxAttempts = 3
	fh.dropAfter["model.safetensors"] = 50_000
	if _, err := h.Pull(context.Background(), "org/model", "main", nil); err != nil {
		t.Fatal(err)
	}
	if n := fh.count("/blob/model.safetensors"); n != 2 {
		t.Fatalf("%d CDN requests, want 2 (one drop, one resume)", n)
	}
}

func TestPullRestartsWhenRangeIgnored(t *testing.T) {
	fh := newFakeHub(t, modelFiles(), "model.safetensors")
	h := testHub(t, fh)
	fh.dropAfter["model.safetensors"] = 70_000
	h.Pull(context.Background(), "org/model", "main", nil)
	fh.ignoreRange = true
	dir, err := h.Pull(context.Background(), "org/model", "main", nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "model.safetensors"))
	if !bytes.Equal(got, fh.files["model.safetensors"]) {
		t.Fatal("file differs after a 200 answer to a Range request")
	}
}

func TestPullDetectsCorruptByte(t *testing.T) {
	fh := newFakeHub(t, modelFiles(), "model.safetensors")
	h := testHub(t, fh)
	fh.corrupt["model.safetensors"] = 123_456
	_, err := h.Pull(context.Background(), "org/model", "main", nil)
	if !errors.Is(err, ErrChecksum) {
		t.Fatalf("want ErrChecksum, got %v", err)
	}
	t.Logf("error: %v", err)
	repoDir := filepath.Join(h.Dir, "models--org--model")
	blob := filepath.Join(repoDir, "blobs", fh.blob("model.safetensors"))
	for _, p := range []string{blob, blob + ".incomplete", filepath.Join(repoDir, "refs", "main"),
		filepath.Join(repoDir, "snapshots", fh.commit, "model.safetensors")} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s exists after a checksum failure", p)
		}
	}
	// A corrupt small (git sha1) file is caught too.
	delete(fh.corrupt, "model.safetensors")
	fh.corrupt["tokenizer.json"] = 3
	h2 := testHub(t, fh)
	if _, err := h2.Pull(context.Background(), "org/model", "main", nil); !errors.Is(err, ErrChecksum) {
		t.Fatalf("small file: want ErrChecksum, got %v", err)
	}
}

func TestPullRefusesHostileNames(t *testing.T) {
	for _, name := range []string{"../../x", "/etc/passwd", "a\x00b", `a\..\b`, "a//b", ".", "snap/../../x", "C:x"} {
		fh := newFakeHub(t, modelFiles(), "model.safetensors")
		fh.listingJSON = `{"sha":"` + fh.commit + `","siblings":[{"rfilename":"config.json","blobId":"` +
			gitSHA1(fh.files["config.json"]) + `","size":10},{"rfilename":` + jsonString(name) + `,"blobId":"` +
			strings.Repeat("1", 40) + `","size":5}]}`
		h := testHub(t, fh)
		_, err := h.Pull(context.Background(), "org/model", "main", nil)
		if !errors.Is(err, ErrUnsafeName) {
			t.Fatalf("%q: want ErrUnsafeName, got %v", name, err)
		}
		for _, p := range tree(t, h.Dir) { // only the cache root and the repo's lock
			if p != "." && !strings.HasPrefix(p, ".locks") {
				t.Fatalf("%q: created %s", name, p)
			}
		}
		if _, err := os.Stat(filepath.Join(h.Dir, "models--org--model")); err == nil {
			t.Fatalf("%q: repo folder created", name)
		}
		if n := fh.count("/resolve/"); n != 0 {
			t.Fatalf("%q: %d file requests after a bad listing", name, n)
		}
	}
}

func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteString(`\` + string(r))
		case r < 0x20:
			b.WriteString(`\u00` + string("0123456789abcdef"[r>>4]) + string("0123456789abcdef"[r&15]))
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func TestPullReusesExistingCacheWithoutRequest(t *testing.T) {
	fh := newFakeHub(t, modelFiles(), "model.safetensors")
	h := testHub(t, fh)
	// Lay out the cache by hand, as huggingface_hub (mlx-lm) leaves it.
	repoDir := filepath.Join(h.Dir, "models--org--model")
	snap := filepath.Join(repoDir, "snapshots", fh.commit)
	os.MkdirAll(snap, 0o755)
	os.MkdirAll(filepath.Join(repoDir, "blobs"), 0o755)
	os.MkdirAll(filepath.Join(repoDir, "refs"), 0o755)
	for _, name := range []string{"config.json", "tokenizer.json", "model.safetensors"} {
		os.WriteFile(filepath.Join(repoDir, "blobs", fh.blob(name)), fh.files[name], 0o644)
		os.Symlink("../../blobs/"+fh.blob(name), filepath.Join(snap, name))
	}
	os.WriteFile(filepath.Join(repoDir, "refs", "main"), []byte(fh.commit), 0o644)

	var stages []Stage
	dir, err := h.Pull(context.Background(), "org/model", "", func(p Progress) { stages = append(stages, p.Stage) })
	if err != nil || dir != snap {
		t.Fatalf("Pull = %q, %v; want %q", dir, err, snap)
	}
	if n := len(fh.reqs()); n != 0 {
		t.Fatalf("%d requests for a cached model", n)
	}
	if len(stages) != 1 || stages[0] != StageCached {
		t.Fatalf("stages %v", stages)
	}
	// Offline mode finds it too, and refuses what is not cached.
	h.Offline = true
	if _, err := h.Pull(context.Background(), "org/model", "main", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Pull(context.Background(), "org/other", "main", nil); !errors.Is(err, ErrOffline) {
		t.Fatalf("offline, not cached: %v", err)
	}
	if len(fh.reqs()) != 0 {
		t.Fatal("offline mode made a request")
	}
	// The listing shows it with its family and modalities.
	list, err := h.List()
	if err != nil || len(list) != 1 {
		t.Fatalf("List = %+v, %v", list, err)
	}
	m := list[0]
	if m.Repo != "org/model" || m.Revision() != "main" || !m.Complete || !m.Info.Supported || !m.Info.Vision || !m.Info.Audio {
		t.Fatalf("listed %+v", m)
	}
	if want := int64(len(fh.files["config.json"]) + len(fh.files["tokenizer.json"]) + len(fh.files["model.safetensors"])); m.Size != want {
		t.Fatalf("size %d, want %d", m.Size, want)
	}
}

func TestPullDiskPreflight(t *testing.T) {
	fh := newFakeHub(t, modelFiles(), "model.safetensors")
	h := testHub(t, fh)
	h.DiskReserve = 1000
	h.DiskFree = func(string) (int64, error) { return 200_000, nil }
	_, err := h.Pull(context.Background(), "org/model", "main", nil)
	if !errors.Is(err, ErrDiskFull) {
		t.Fatalf("want ErrDiskFull, got %v", err)
	}
	t.Logf("error: %v", err)
	if n := fh.count("/resolve/"); n != 0 {
		t.Fatalf("%d file requests despite too little space", n)
	}
}

func TestPullFitCheckBeforeWeights(t *testing.T) {
	fh := newFakeHub(t, modelFiles(), "model.safetensors")
	h := testHub(t, fh)
	h.Memory = func() (Budget, error) { return Budget{TotalRAM: 8 << 20, Usable: 4 << 20, Source: "test"}, nil }
	_, err := h.Pull(context.Background(), "org/model", "main", nil)
	var fe *FitError
	if !errors.As(err, &fe) || !errors.Is(err, ErrDoesNotFit) {
		t.Fatalf("want a FitError, got %v", err)
	}
	if n := fh.count("model.safetensors"); n != 0 {
		t.Fatalf("%d weight requests before the fit refusal", n)
	}
	// --force downloads anyway.
	if _, err := h.PullWith(context.Background(), "org/model", "main", PullOptions{SkipFit: true}, nil); err != nil {
		t.Fatal(err)
	}
}

func TestPullCancelKeepsPartial(t *testing.T) {
	fh := newFakeHub(t, modelFiles(), "model.safetensors")
	h := testHub(t, fh)
	fh.stall["model.safetensors"] = 40_000
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := h.Pull(ctx, "org/model", "main", nil)
		errc <- err
	}()
	inc := filepath.Join(h.Dir, "models--org--model", "blobs", fh.blob("model.safetensors")+".incomplete")
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if st, err := os.Stat(inc); err == nil && st.Size() == 40_000 {
			break
		}
	}
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("want context.Canceled, got %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("cancel did not stop the pull")
	}
	if st, err := os.Stat(inc); err != nil || st.Size() != 40_000 {
		t.Fatalf("partial not kept after cancel: %v", err)
	}
}

func TestPullStallTimesOut(t *testing.T) {
	fh := newFakeHub(t, modelFiles(), "model.safetensors")
	h := testHub(t, fh)
	h.IdleTimeout = 200 * time.Millisecond
	h.MaxAttempts = 2
	fh.stall["model.safetensors"] = 10_000
	dir, err := h.Pull(context.Background(), "org/model", "main", nil)
	if err != nil {
		t.Fatalf("a stall should be retried and resumed: %v", err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "model.safetensors"))
	if !bytes.Equal(got, fh.files["model.safetensors"]) {
		t.Fatal("content differs after a stall")
	}
	if n := fh.count("/blob/model.safetensors"); n != 2 {
		t.Fatalf("%d CDN requests, want 2", n)
	}
}

func TestConcurrentPullsSerialise(t *testing.T) {
	fh := newFakeHub(t, modelFiles(), "model.safetensors")
	h := testHub(t, fh)
	h2 := *h // a second process's view of the same cache
	errs := make(chan error, 2)
	for _, hh := range []*Hub{h, &h2} {
		go func() {
			_, err := hh.Pull(context.Background(), "org/model", "main", nil)
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := fh.count("/blob/model.safetensors"); n != 1 {
		t.Fatalf("the weight file was downloaded %d times", n)
	}
	if n := fh.count("/api/models/"); n != 1 {
		t.Fatalf("%d listings; the second pull should find the cache complete", n)
	}
}

func TestRemove(t *testing.T) {
	fh := newFakeHub(t, modelFiles(), "model.safetensors")
	h := testHub(t, fh)
	if _, err := h.Pull(context.Background(), "org/model", "main", nil); err != nil {
		t.Fatal(err)
	}
	l, err := tryLock(filepath.Join(h.lockDir(Repo{org: "org", name: "model"}), repoLockName))
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Remove("org/model"); !errors.Is(err, ErrInProgress) {
		t.Fatalf("remove during a pull: %v", err)
	}
	l.unlock()
	if err := h.Remove("org/model"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(h.Dir, "models--org--model")); err == nil {
		t.Fatal("repo folder still there")
	}
	if err := h.Remove("org/model"); !errors.Is(err, ErrNotCached) {
		t.Fatalf("second remove: %v", err)
	}
	if err := h.Remove("../x"); !errors.Is(err, ErrUnsafeName) {
		t.Fatalf("remove ../x: %v", err)
	}
}

func TestPullErrorsAreClear(t *testing.T) {
	fh := newFakeHub(t, modelFiles(), "model.safetensors")
	h := testHub(t, fh)
	fh.listingJSON = `{"sha":"nothex","siblings":[]}`
	if _, err := h.Pull(context.Background(), "org/model", "main", nil); !errors.Is(err, ErrBadListing) {
		t.Fatalf("bad commit: %v", err)
	}
	if _, err := h.Pull(context.Background(), "org/model", "../main", nil); !errors.Is(err, ErrUnsafeName) {
		t.Fatalf("bad revision: %v", err)
	}
}
