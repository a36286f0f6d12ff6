package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const tinyDir = "testdata/tiny"

// goldenFile is the shape of tokenizer-golden.json and
// gemma3-tokenizer-golden.json (ids from the transformers.js oracle).
type goldenFile struct {
	Oracle string       `json:"oracle"`
	Cases  []goldenCase `json:"cases"`
}

type goldenCase struct {
	Text               string   `json:"text"`
	IDs                []int32  `json:"ids"`
	Tokens             []string `json:"tokens"`
	IDsAddSpecial      []int32  `json:"ids_add_special_tokens"`
	Decoded            string   `json:"decoded"`
	DecodedSkipSpecial string   `json:"decoded_skip_special"`
}

func readGolden(t testing.TB, path string) goldenFile {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var g goldenFile
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return g
}

func loadTiny(t testing.TB) *Tokenizer {
	t.Helper()
	tok, err := Load(tinyDir)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// checkGoldens compares every field of every case and returns how many
// cases matched completely.
func checkGoldens(t *testing.T, tok *Tokenizer, g goldenFile) int {
	t.Helper()
	ok := 0
	for i, c := range g.Cases {
		good := true
		fail := func(what string, got, want any) {
			t.Errorf("case %d %.60q: %s\n got  %v\n want %v", i, c.Text, what, got, want)
			good = false
		}
		ids := tok.Encode(c.Text, false)
		if !slices.Equal(ids, c.IDs) {
			fail("ids", ids, c.IDs)
		}
		var pieces []string
		for _, id := range ids {
			pieces = append(pieces, tok.IDToken(id))
		}
		if c.Tokens != nil && !slices.Equal(pieces, c.Tokens) && !(len(pieces) == 0 && len(c.Tokens) == 0) {
			fail("tokens", pieces, c.Tokens)
		}
		if got := tok.Encode(c.Text, true); !slices.Equal(got, c.IDsAddSpecial) {
			fail("ids_add_special_tokens", got, c.IDsAddSpecial)
		}
		if got := tok.Decode(c.IDs, false); got != c.Decoded {
			fail("decoded", got, c.Decoded)
		}
		if got := tok.Decode(c.IDs, true); got != c.DecodedSkipSpecial {
			fail("decoded_skip_special", got, c.DecodedSkipSpecial)
		}
		if good {
			ok++
		}
	}
	return ok
}

func TestTinyGoldens(t *testing.T) {
	tok := loadTiny(t)
	g := readGolden(t, "testdata/tokenizer-golden.json")
	ok := checkGoldens(t, tok, g)
	t.Logf("tiny tokenizer: %d/%d golden strings match (oracle: %s)", ok, len(g.Cases), g.Oracle)
	if len(g.Cases) != 45 {
		t.Errorf("want 45 golden cases, file has %d", len(g.Cases))
	}
}

func TestTinyTables(t *testing.T) {
	tok := loadTiny(t)
	if tok.VocabSize() != 1024 {
		t.Errorf("VocabSize = %d, want 1024", tok.VocabSize())
	}
	for name, want := range map[string]int32{"<bos>": 2, "<eos>": 1, "<|channel>": 100, "<channel|>": 101, "<turn|>": 106, "<0x0A>": 120, "\n": 107} {
		if id, ok := tok.TokenID(name); !ok || id != want {
			t.Errorf("TokenID(%q) = %d, %v; want %d", name, id, ok, want)
		}
		if got := tok.IDToken(want); got != name {
			t.Errorf("IDToken(%d) = %q, want %q", want, got, name)
		}
	}
	if _, ok := tok.TokenID("<start_of_turn>"); ok {
		t.Error("TokenID(<start_of_turn>) found in the tiny vocab")
	}
	if bos, ok := tok.BOS(); !ok || bos != 2 {
		t.Errorf("BOS = %d, %v", bos, ok)
	}
	if eos, ok := tok.EOS(); !ok || eos != 1 {
		t.Errorf("EOS = %d, %v", eos, ok)
	}
	for id, want := range map[int32]bool{0: true, 2: true, 4: false, 5: false, 100: true, 107: false, 1020: true, 500: false, -1: false, 5000: false} {
		if tok.IsSpecial(id) != want {
			t.Errorf("IsSpecial(%d) = %v", id, !want)
		}
	}
	if tok.IDToken(-1) != "" || tok.IDToken(1024) != "" {
		t.Error("IDToken of an unknown id is not empty")
	}
}

func TestLoadErrors(t *testing.T) {
	good, err := os.ReadFile(filepath.Join(tinyDir, "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		"empty":          "",
		"not json":       "hello, I am not JSON",
		"array":          "[1,2,3]",
		"truncated":      string(good[:len(good)/2]),
		"no model":       `{"added_tokens": []}`,
		"not bpe":        `{"model": {"type": "Unigram", "vocab": []}}`,
		"huge id":        `{"model": {"type": "BPE", "vocab": {"a": 2000000000}, "merges": [], "unk_token": "a"}}`,
		"negative id":    `{"model": {"type": "BPE", "vocab": {"a": -1}, "merges": []}}`,
		"bad merge":      `{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": [["a", "b"]], "unk_token": "a"}}`,
		"dup id":         `{"model": {"type": "BPE", "vocab": {"a": 0, "b": 0}, "merges": []}}`,
		"no unk":         `{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}}`,
		"regex":          `{"normalizer": {"type": "Replace", "pattern": {"Regex": "(a+)+"}, "content": "x"}, "model": {"type": "BPE", "vocab": {"a": 0}, "merges": [], "unk_token": "a"}}`,
		"deep":           `{"x": ` + repeat("[", 10000) + repeat("]", 10000) + `, "model": {}}`,
		"trailing":       `{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [], "unk_token": "a"}} x`,
		"bad utf8":       "{\"model\": \xff}",
		"unsupported pt": `{"pre_tokenizer": {"type": "ByteLevel"}, "model": {"type": "BPE", "vocab": {"a": 0}, "merges": [], "unk_token": "a"}}`,
	}
	for name, text := range cases {
		tok, err := parse("tokenizer.json", []byte(text))
		if err == nil {
			t.Errorf("%s: parsed without error (%d ids)", name, tok.VocabSize())
			continue
		}
		if len(err.Error()) > 300 {
			t.Errorf("%s: error too long: %.300s", name, err)
		}
		t.Logf("%-14s → %v", name, err)
	}
}

func TestLoadMissingDir(t *testing.T) {
	if _, err := Load(t.TempDir()); err == nil {
		t.Fatal("Load of an empty folder succeeded")
	}
}

func repeat(s string, n int) string {
	b := make([]byte, 0, len(s)*n)
	for range n {
		b = append(b, s...)
	}
	return string(b)
}

// TestEncodePlain: special tokens typed as text stay text (no placeholder
// or control id can come from user content), and text without them
// encodes as with Encode.
func TestEncodePlain(t *testing.T) {
	toks := map[string]*Tokenizer{"tiny": loadTiny(t)}
	if g3 := gemma3Maybe(); g3 != nil {
		toks["gemma3"] = g3
	}
	for name, tok := range toks {
		specials := 0
		for id := range int32(tok.VocabSize()) {
			if !tok.IsSpecial(id) {
				continue
			}
			specials++
			text := "x" + tok.IDToken(id) + " y"
			ids := tok.EncodePlain(text)
			for _, got := range ids {
				if tok.IsSpecial(got) {
					t.Fatalf("%s: EncodePlain(%q) produced special id %d", name, text, got)
				}
			}
			if back := tok.Decode(ids, false); back != text {
				t.Fatalf("%s: EncodePlain(%q) decodes to %q", name, text, back)
			}
		}
		for _, c := range readGolden(t, "testdata/tokenizer-golden.json").Cases {
			plain, full := tok.EncodePlain(c.Text), tok.Encode(c.Text, false)
			hasSpecial := false
			for _, id := range full {
				hasSpecial = hasSpecial || tok.IsSpecial(id)
			}
			if !hasSpecial && !slices.Equal(plain, full) {
				t.Errorf("%s: %q: EncodePlain %v != Encode %v", name, c.Text, plain, full)
			}
		}
		t.Logf("%s: %d special tokens written as text stay text", name, specials)
	}
}

// TestMaxTokenBytesBoundsEncode: no token of an encoding stands for more
// input bytes than MaxTokenBytes, so len(text)/MaxTokenBytes never exceeds
// the real count.
func TestMaxTokenBytesBoundsEncode(t *testing.T) {
	tok := loadTiny(t)
	per := tok.MaxTokenBytes()
	if per <= 0 {
		t.Fatalf("MaxTokenBytes = %d for a byte-fallback tokenizer", per)
	}
	for _, text := range []string{"", "hello world", strings.Repeat(" ", 500), strings.Repeat("ab", 300),
		"<start_of_turn>user\nhi<end_of_turn>", strings.Repeat("\n", 99), "naïve café ☕ " + strings.Repeat("x", 77)} {
		if n := len(tok.Encode(text, false)); len(text)/per > n {
			t.Errorf("%q: %d tokens, but the bound says at least %d", text[:min(len(text), 20)], n, len(text)/per)
		}
	}
}
