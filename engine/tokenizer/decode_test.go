package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"perch/engine/tokenizer/realvocab"
	"strings"
	"testing"
	"unicode/utf8"

	sugarme "github.com/sugarme/tokenizer/pretrained"
)

// streamAll feeds ids one by one and returns every chunk.
func streamAll(tok *Tokenizer, ids []int32, skip bool) []string {
	s := tok.NewStream(skip)
	var chunks []string
	for _, id := range ids {
		chunks = append(chunks, s.Add(id))
	}
	return append(chunks, s.Flush())
}

// checkStream asserts the stream invariants for one id list: valid UTF-8
// chunks whose concatenation equals Decode.
func checkStream(t *testing.T, tok *Tokenizer, ids []int32, label string) {
	t.Helper()
	for _, skip := range []bool{false, true} {
		chunks := streamAll(tok, ids, skip)
		for i, c := range chunks {
			if !utf8.ValidString(c) {
				t.Fatalf("%s: chunk %d %q is not valid UTF-8", label, i, c)
			}
		}
		if got, want := strings.Join(chunks, ""), tok.Decode(ids, skip); got != want {
			t.Fatalf("%s (skip=%v): stream %q != Decode %q", label, skip, got, want)
		}
	}
}

func TestStreamMatchesDecode(t *testing.T) {
	tok := loadTiny(t)
	for _, c := range readGolden(t, "testdata/tokenizer-golden.json").Cases {
		checkStream(t, tok, c.IDs, c.Text)
	}
	if g3 := gemma3Maybe(); g3 != nil {
		c, _ := readCorpus(t)
		for i, d := range c.Docs {
			checkStream(t, g3, g3.Encode(d.Text, false), "corpus doc "+itoa(i))
		}
	}
}

func TestStreamHoldsPartialCharacters(t *testing.T) {
	tok := loadTiny(t)
	b := func(v byte) int32 { return tok.byteID[v] }
	s := tok.NewStream(false)
	// 🦙 = F0 9F A6 99: nothing until the fourth byte.
	for _, v := range []byte{0xF0, 0x9F, 0xA6} {
		if out := s.Add(b(v)); out != "" {
			t.Fatalf("partial byte %#x emitted %q", v, out)
		}
	}
	if out := s.Add(b(0x99)); out != "🦙" {
		t.Fatalf("completing byte emitted %q, want 🦙", out)
	}
	// A special token skipped in the middle of a character does not break it.
	s = tok.NewStream(true)
	s.Add(b(0xC3))
	if out := s.Add(2); out != "" { // <bos>, skipped
		t.Fatalf("skipped special emitted %q", out)
	}
	if out := s.Add(b(0xA9)); out != "é" {
		t.Fatalf("got %q, want é", out)
	}
	// An impossible byte is U+FFFD at once; an unfinished character before
	// a normal token becomes one U+FFFD per byte.
	s = tok.NewStream(false)
	if out := s.Add(b(0xFF)); out != "\uFFFD" {
		t.Fatalf("0xFF emitted %q", out)
	}
	s.Add(b(0xE2))
	s.Add(b(0x82))
	hello, _ := tok.TokenID("He")
	if out := s.Add(hello); out != "\uFFFD\uFFFDHe" {
		t.Fatalf("unfinished character then text emitted %q", out)
	}
	s.Add(b(0xF0))
	if out := s.Flush(); out != "\uFFFD" {
		t.Fatalf("Flush of an unfinished character = %q", out)
	}
	if out := s.Add(-5) + s.Add(99999); out != "" {
		t.Fatalf("unknown ids emitted %q", out)
	}
}

// TestDecodeMatchesSugarme uses github.com/sugarme/tokenizer's decoder
// chain, built from the same tokenizer.json, as an independent oracle for
// Decode on everything the goldens and the corpus encode to.
func TestDecodeMatchesSugarme(t *testing.T) {
	check := func(dir string, tok *Tokenizer, idLists [][]int32) {
		data, err := os.ReadFile(filepath.Join(dir, "tokenizer.json"))
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Decoder map[string]any `json:"decoder"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		dec, err := sugarme.CreateDecoder(doc.Decoder)
		if err != nil {
			t.Fatal(err)
		}
		for _, ids := range idLists {
			pieces := make([]string, len(ids))
			for i, id := range ids {
				pieces[i] = tok.IDToken(id)
			}
			if got, want := tok.Decode(ids, false), dec.Decode(pieces); got != want {
				t.Errorf("%s: Decode %q, sugarme %q", dir, got, want)
			}
		}
		t.Logf("%s: Decode agrees with sugarme's decoder on %d id lists", dir, len(idLists))
	}
	tiny := loadTiny(t)
	var lists [][]int32
	for _, c := range readGolden(t, "testdata/tokenizer-golden.json").Cases {
		lists = append(lists, c.IDs)
	}
	check(tinyDir, tiny, lists)
	if g3 := gemma3Maybe(); g3 != nil {
		c, whole := readCorpus(t)
		lists = lists[:0]
		for _, d := range c.Docs {
			lists = append(lists, g3.Encode(d.Text, false))
		}
		lists = append(lists, g3.Encode(whole, false))
		check(filepath.Join(realvocab.Cache(repoRoot), "gemma3"), g3, lists)
	}
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}
