package hub

import (
	"path/filepath"
	"perch/engine/gemma4"
	"strings"
	"testing"
)

// FuzzHFListing: any bytes either fail validation or yield files whose
// cache paths all stay inside the repo folder.
func FuzzHFListing(f *testing.F) {
	sha := strings.Repeat("a", 40)
	f.Add(`{"sha":"` + sha + `","siblings":[{"rfilename":"config.json","blobId":"` + sha + `","size":10}]}`)
	f.Add(`{"sha":"` + sha + `","siblings":[{"rfilename":"model.safetensors","blobId":"` + sha + `","size":134,"lfs":{"sha256":"` + strings.Repeat("b", 64) + `","size":5000000000,"pointerSize":134}}]}`)
	f.Add(`{"sha":"` + sha + `","siblings":[{"rfilename":"../../x","blobId":"` + sha + `","size":1}]}`)
	f.Add(`{"sha":"` + sha + `","siblings":[{"rfilename":"a/b.json","blobId":"` + sha + `","size":1},{"rfilename":"a","blobId":"` + sha + `","size":1}]}`)
	f.Add(`{"sha":"` + sha + `","siblings":[{"rfilename":"x","lfs":{"oid":"sha256:` + strings.Repeat("c", 64) + `","size":-1}}]}`)
	f.Add(`{"sha":"zz","siblings":null}`)
	f.Add(`[]`)
	root := filepath.Join(string(filepath.Separator), "cache")
	h := &Hub{Dir: root}
	repo := Repo{org: "org", name: "model"}
	f.Fuzz(func(t *testing.T, data string) {
		l, err := ParseListing(repo, []byte(data))
		if err != nil {
			return
		}
		repoDir := h.repoDir(repo) + string(filepath.Separator)
		for _, file := range l.Files {
			for _, p := range []string{
				filepath.Join(h.snapshotDir(repo, l.Commit), filepath.FromSlash(file.Path)),
				h.blobPath(repo, file.Blob) + ".incomplete",
			} {
				if !strings.HasPrefix(p, repoDir) {
					t.Fatalf("path %q escapes %q", p, repoDir)
				}
			}
			if file.Size < 0 || !(isHex(file.Blob, 40) || isHex(file.Blob, 64)) {
				t.Fatalf("accepted %+v", file)
			}
		}
	})
}

// FuzzShardIndex: accepted weight_map values are safe relative paths.
func FuzzShardIndex(f *testing.F) {
	f.Add(`{"metadata":{"total_size":1},"weight_map":{"a.weight":"model-00001-of-00002.safetensors"}}`)
	f.Add(`{"weight_map":{"a":"../../etc/passwd.safetensors"}}`)
	f.Add(`{"weight_map":{"a":"/abs.safetensors","b":"x\u0000.safetensors"}}`)
	f.Add(`{"weight_map":{}}`)
	f.Fuzz(func(t *testing.T, data string) {
		idx, err := ParseShardIndex([]byte(data))
		if err != nil {
			return
		}
		for _, s := range idx.Shards() {
			if CheckRelPath(s) != nil || !filepath.IsLocal(filepath.FromSlash(s)) {
				t.Fatalf("accepted shard %q", s)
			}
		}
	})
}

// FuzzConfigFit: any config either errors or gives a finite, positive,
// self-consistent estimate.
func FuzzConfigFit(f *testing.F) {
	for _, c := range Catalog() {
		f.Add(string(c.config), int64(c.DiskBytes), 8192, int64(16<<30))
	}
	f.Add(`{"text_config":{"hidden_size":-1}}`, int64(0), 0, int64(0))
	f.Add(`{"hidden_size":8,"num_hidden_layers":1,"layer_types":["full_attention"]}`, int64(1), 1, int64(1))
	f.Fuzz(func(t *testing.T, cfg string, weights int64, ctx int, usable int64) {
		if weights < 0 {
			weights = -weights
		}
		d, err := gemma4.DescribeRemote([]byte(cfg), weights)
		if err != nil {
			return
		}
		for _, backend := range []string{gemma4.BackendGo, gemma4.BackendMLX} {
			e := EstimateMemory(d, backend, ctx, Budget{Usable: usable})
			if e.Total <= 0 || e.KVCache < 0 || e.Working <= 0 || e.Context <= 0 || e.MaxContext < 0 || e.MaxContext > e.ModelContext {
				t.Fatalf("estimate %+v", e)
			}
			if e.Fits != (e.Total <= usable) {
				t.Fatalf("Fits %v for total %d, usable %d", e.Fits, e.Total, usable)
			}
		}
	})
}

// FuzzRepoAndPath: accepted repo ids, revisions and file names build paths
// inside the cache.
func FuzzRepoAndPath(f *testing.F) {
	for _, s := range []string{"mlx-community/gemma-4-e2b-it-4bit@main", "gpt2", "a/b@refs/pr/1", "../x", "a/b@..", "a--b/c", "a/b/c", "a/b@v1.0"} {
		f.Add(s, "config.json")
	}
	f.Add("org/m", "../../x")
	f.Add("org/m", "a\x00b")
	f.Fuzz(func(t *testing.T, ref, file string) {
		h := &Hub{Dir: filepath.Join(string(filepath.Separator), "cache")}
		repo, rev, err := ParseRef(ref)
		if err == nil {
			root := h.repoDir(repo) + string(filepath.Separator)
			if p := h.refPath(repo, rev); !strings.HasPrefix(p, root) {
				t.Fatalf("ref path %q escapes", p)
			}
			if strings.Contains(repo.cacheDirName(), string(filepath.Separator)) {
				t.Fatalf("repo dir %q has a separator", repo.cacheDirName())
			}
			back, ok := repoFromCacheDir(repo.cacheDirName())
			if !ok || back != repo {
				t.Fatalf("cache dir name of %v does not round-trip", repo)
			}
		}
		if CheckRelPath(file) == nil && !filepath.IsLocal(filepath.FromSlash(file)) {
			t.Fatalf("accepted non-local %q", file)
		}
	})
}
