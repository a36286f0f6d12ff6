package tokenizer

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"perch/engine/tokenizer/realvocab"
)

// The Gemma-4 test tokenizer is the real Gemma 3 vocabulary and merges with
// Gemma-4's special tokens at their real ids (testdata/oracle/gemma4.js says
// exactly how it is built); its goldens are the JavaScript oracle's ids.

// gemma4Specials are Gemma-4's control tokens and their ids.
var gemma4Specials = map[string]int32{
	"<pad>": 0, "<eos>": 1, "<bos>": 2, "<unk>": 3,
	"<|tool>": 46, "<tool|>": 47, "<|tool_call>": 48, "<tool_call|>": 49, "<|tool_response>": 50,
	"<tool_response|>": 51, `<|"|>`: 52, "<|think|>": 98, "<|channel>": 100, "<channel|>": 101,
	"<|turn>": 105, "<turn|>": 106, "<|image>": 255999, "<|audio>": 256000,
	"<|image|>": 258880, "<|audio|>": 258881, "<image|>": 258882, "<audio|>": 258883, "<|video|>": 258884,
}

const (
	gemma4CorpusPath = "testdata/gemma4-corpus.json.gz"
	gemma4RandomPath = "testdata/gemma4-random.json.gz"
)

func gemma4(t testing.TB) *Tokenizer { return real(t, realvocab.Gemma4) }

// TestGemma4FixtureIsTheOracles: the cached test tokenizer is the file the
// goldens were encoded with (so a change to gemma4.js cannot pass unseen).
func TestGemma4FixtureIsTheOracles(t *testing.T) {
	dir := realvocab.Require(t, repoRoot, realvocab.Gemma4)
	data, err := os.ReadFile(filepath.Join(dir, "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	for _, path := range []string{gemma4CorpusPath, gemma4RandomPath} {
		c, _ := readCorpusFile(t, path)
		if !strings.Contains(c.Tokenizer, hex.EncodeToString(sum[:])) {
			t.Fatalf("%s was encoded with %q; the cached tokenizer.json is sha256 %x", path, c.Tokenizer, sum)
		}
	}
}

// TestGemma4SpecialTokens: every Gemma-4 control token is one special
// token at its real id, in text and in decoding; Gemma 3's own control
// tokens are ordinary text here.
func TestGemma4SpecialTokens(t *testing.T) {
	tok := gemma4(t)
	if tok.VocabSize() != 262144 {
		t.Fatalf("vocabulary %d, want 262144", tok.VocabSize())
	}
	for s, id := range gemma4Specials {
		if got, ok := tok.TokenID(s); !ok || got != id || tok.IDToken(id) != s || !tok.IsSpecial(id) {
			t.Errorf("%s: id %d (%v), IDToken(%d) %q, special %v", s, got, ok, id, tok.IDToken(id), tok.IsSpecial(id))
		}
		if ids := tok.Encode("a"+s+"b", false); len(ids) != 3 || ids[1] != id {
			t.Errorf("a%sb encodes to %v", s, ids)
		}
		if tok.Decode([]int32{id}, false) != s || tok.Decode([]int32{id}, true) != "" {
			t.Errorf("%s decodes to %q / %q (skipping specials)", s, tok.Decode([]int32{id}, false), tok.Decode([]int32{id}, true))
		}
	}
	turn := tok.Encode("<|turn>user\nHi<turn|>\n<|turn>model\n<|channel>thought\n<channel|>", false)
	if want := []int32{105, 2364, 107, 10979, 106, 107, 105, 4368, 107, 100, 45518, 107, 101}; !slices.Equal(turn, want) {
		t.Errorf("a turn encodes to %v, want %v", turn, want)
	}
	for _, s := range []string{"<start_of_turn>", "<end_of_turn>", "<start_of_image>", "<image_soft_token>"} {
		if ids := tok.Encode(s, false); len(ids) < 2 {
			t.Errorf("Gemma 3's %s is one token %v in the Gemma-4 tokenizer", s, ids)
		}
	}
}

// TestGemma4Corpus: chat transcripts in Gemma-4's format (system turns with
// <|think|>, thought channels, tool calls and responses, image, audio and
// video placeholders) encode exactly as the oracle's.
func TestGemma4Corpus(t *testing.T) {
	ok, total, c, whole := checkCorpus(t, gemma4(t), gemma4CorpusPath)
	t.Logf("Gemma-4 test tokenizer: %d/%d transcripts match the oracle (%d docs + the whole %d-byte corpus, %d tokens)",
		ok, total, len(c.Docs), len(whole), c.Whole.N)
}

// TestGemma4RandomStrings: 1,000 strings glued from Gemma-4's special
// tokens, near misses ("<|turn", "turn|>", "<| turn>") and Gemma 3's control
// tokens.
func TestGemma4RandomStrings(t *testing.T) {
	ok, total, _, _ := checkCorpus(t, gemma4(t), gemma4RandomPath)
	t.Logf("Gemma-4 test tokenizer: %d/%d special-token strings match the oracle", ok, total)
}
