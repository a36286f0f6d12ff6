package tokenizer

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// minimalJSON is a small valid tokenizer.json the fuzzer can mutate quickly.
const minimalJSON = `{"added_tokens":[{"id":0,"content":"<s>","special":true,"normalized":false},
{"id":7,"content":"<x>","lstrip":true,"rstrip":true,"single_word":true}],
"normalizer":{"type":"Sequence","normalizers":[{"type":"Prepend","prepend":"▁"},{"type":"Replace","pattern":{"String":" "},"content":"▁"}]},
"pre_tokenizer":{"type":"Split","pattern":{"String":" "},"behavior":"Isolated","invert":false},
"post_processor":{"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"<s>","type_id":0}},{"Sequence":{"id":"A","type_id":0}}],"special_tokens":{"<s>":{"id":"<s>","ids":[0]}}},
"decoder":{"type":"Sequence","decoders":[{"type":"Replace","pattern":{"String":"▁"},"content":" "},{"type":"ByteFallback"},{"type":"Fuse"},{"type":"Strip","content":" ","start":1,"stop":0}]},
"model":{"type":"BPE","unk_token":"<unk>","byte_fallback":false,"fuse_unk":true,
"vocab":{"<s>":0,"<unk>":1,"a":2,"b":3,"▁":4,"ab":5,"▁ab":6,"\u00e9":8},"merges":["a b",["▁","ab"]]}}`

func FuzzParseTokenizerJSON(f *testing.F) {
	tiny, err := os.ReadFile(filepath.Join(tinyDir, "tokenizer.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(tiny)
	f.Add([]byte(minimalJSON))
	f.Add(tiny[:len(tiny)/3])
	f.Add([]byte(strings.Replace(minimalJSON, `"a b"`, `"a  b"`, 1)))
	f.Add([]byte(strings.Replace(minimalJSON, `"ab":5`, `"ab":4194304`, 1)))
	f.Add([]byte(strings.Replace(minimalJSON, `"merges"`, `"merges0"`, 1)))
	f.Add([]byte(`{"model":{"merges":[["a","b"]],"vocab":{"a":0,"b":1,"ab":2},"unk_token":"a"}}`))
	f.Add([]byte(`{"model":{"vocab":{"\ud83e\udd99":0,"\ud800":1},"unk_token":"\ud83e\udd99"}}`))
	f.Add([]byte("{\"model\": [[[[[[[[[[[[[[]]]]]]]]]]]]]]}"))
	f.Add([]byte("\xef\xbb\xbf{}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tok, err := parse("tokenizer.json", data)
		if err != nil {
			if strings.Contains(err.Error(), "malformed tokenizer (") {
				t.Fatalf("parse panicked: %v", err)
			}
			return
		}
		for _, s := range []string{"", "ab ab", "<s>x<x> é\xff", "a\u00e9b\n"} {
			ids := tok.Encode(s, true)
			for _, id := range ids {
				if id < 0 || int(id) >= tok.VocabSize() {
					t.Fatalf("Encode(%q) produced id %d outside [0, %d)", s, id, tok.VocabSize())
				}
			}
			if out := tok.Decode(ids, false); !utf8.ValidString(out) {
				t.Fatalf("Decode produced invalid UTF-8 %q", out)
			}
		}
	})
}

func FuzzTokenizerConfig(f *testing.F) {
	data, err := os.ReadFile(filepath.Join(tinyDir, "tokenizer.json"))
	if err != nil {
		f.Fatal(err)
	}
	cfg, err := os.ReadFile(filepath.Join(tinyDir, "tokenizer_config.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(cfg)
	f.Add([]byte(`{"bos_token": {"content": "<bos>", "__type": "AddedToken"}, "add_bos_token": false, "add_eos_token": true, "eos_token": "<eos>"}`))
	f.Add([]byte(`{"added_tokens_decoder": {"5": {"content": "[multimodal]", "special": true}, "x": {}}}`))
	f.Add([]byte(`{"additional_special_tokens": [[["<mask>"]], {"content": "<mask>"}], "extra_special_tokens": {"a": "<unused3>"}}`))
	f.Add([]byte(`{"bos_token": "<nope>"}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, cfg []byte) {
		tok, err := parse("tokenizer.json", data)
		if err != nil {
			t.Fatal(err)
		}
		if err := tok.applyConfig("tokenizer_config.json", cfg); err != nil {
			return
		}
		ids := tok.Encode("<bos>Hello<eos> world", true)
		for _, id := range ids {
			if id < 0 || int(id) >= tok.VocabSize() {
				t.Fatalf("id %d outside the vocabulary", id)
			}
		}
		tok.Decode(ids, true)
	})
}

// FuzzEncodeDecode checks, on the tiny tokenizer and (when cached) the real
// Gemma 3 one: no panic on any input, ids in range, Decode(Encode(s)) == s
// for valid UTF-8 without a literal '▁', the stream equals Decode, and
// addSpecial only wraps the ids.
func FuzzEncodeDecode(f *testing.F) {
	for _, c := range readGolden(f, "testdata/tokenizer-golden.json").Cases {
		f.Add(c.Text)
	}
	f.Add("\xff\xfe<0x41> <bos\x00>\r\n\r\n")
	f.Add(strings.Repeat("ab", 500) + strings.Repeat(" ", 100) + strings.Repeat("\n", 40))
	toks := []*Tokenizer{loadTiny(f)}
	if g3 := gemma3Maybe(); g3 != nil {
		toks = append(toks, g3)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, tok := range toks {
			ids := tok.Encode(s, false)
			for _, id := range ids {
				if id < 0 || int(id) >= tok.VocabSize() {
					t.Fatalf("id %d outside [0, %d)", id, tok.VocabSize())
				}
			}
			if with := tok.Encode(s, true); !slices.Equal(with, slices.Concat(tok.prefix, ids, tok.suffix)) {
				t.Fatalf("Encode(s, true) = %v, want prefix+%v+suffix", with, ids)
			}
			out := tok.Decode(ids, false)
			if utf8.ValidString(s) && !strings.Contains(s, "▁") && out != s {
				t.Fatalf("Decode(Encode(%q)) = %q", s, out)
			}
			checkStream(t, tok, ids, s)
			plain := tok.EncodePlain(s)
			for _, id := range plain {
				if tok.IsSpecial(id) {
					t.Fatalf("EncodePlain(%q) produced special id %d", s, id)
				}
			}
			if utf8.ValidString(s) && !strings.Contains(s, "▁") && tok.Decode(plain, false) != s {
				t.Fatalf("Decode(EncodePlain(%q)) = %q", s, tok.Decode(plain, false))
			}
		}
	})
}
