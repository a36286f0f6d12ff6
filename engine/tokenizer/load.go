package tokenizer

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"unicode/utf8"
)

// Size guards, checked before anything is allocated in proportion to them.
const (
	maxTokenizerJSON = 512 << 20 // Gemma's is 33 MB
	maxConfigJSON    = 64 << 20  // Gemma 3's tokenizer_config.json is 1.2 MB
	maxID            = 1 << 22   // Gemma's vocabulary has 262,145 ids
	maxAddedTokens   = 1 << 20
)

// Load reads dir/tokenizer.json and, when present, dir/tokenizer_config.json
// (special-token flags, bos/eos names, clean_up_tokenization_spaces).
func Load(dir string) (*Tokenizer, error) {
	path := filepath.Join(dir, "tokenizer.json")
	data, err := readCapped(path, maxTokenizerJSON)
	if err != nil {
		return nil, err
	}
	t, err := parse(path, data)
	if err != nil {
		return nil, err
	}
	cfgPath := filepath.Join(dir, "tokenizer_config.json")
	cfg, err := readCapped(cfgPath, maxConfigJSON)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		if err := t.applyConfig(cfgPath, cfg); err != nil {
			return nil, err
		}
		t.buildTries() // the config may have marked more tokens special
	}
	return t, nil
}

func readCapped(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("%s: %d MiB is larger than the %d MiB a tokenizer file may be", path, st.Size()>>20, limit>>20)
	}
	// One allocation of the stated size (ReadAll would double its way up);
	// a file that grows meanwhile is still capped at limit.
	data := make([]byte, st.Size(), st.Size()+1)
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	rest, err := io.ReadAll(io.LimitReader(f, limit-int64(len(data))+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if data = append(data, rest...); int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: larger than the %d MiB a tokenizer file may be", path, limit>>20)
	}
	return data, nil
}

// parse builds a Tokenizer from the bytes of a tokenizer.json; name is used
// in errors.
func parse(name string, data []byte) (t *Tokenizer, err error) {
	defer func() { // belt and braces: no panic reaches the caller
		if r := recover(); r != nil {
			t, err = nil, fmt.Errorf("%s: malformed tokenizer (%v)", name, r)
		}
	}()
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("%s: not UTF-8 text (is this really a tokenizer.json?)", name)
	}
	s := &scanner{file: name, data: data}
	if s.peek() != '{' {
		return nil, fmt.Errorf("%s: not a JSON object (is this really a tokenizer.json?)", name)
	}
	var raw struct{ added, normalizer, preTok, post, decoder []byte }
	b := &builder{name: name, data: data}
	err = s.object(func(key []byte) error {
		var dst *[]byte
		switch string(key) {
		case "added_tokens":
			dst = &raw.added
		case "normalizer":
			dst = &raw.normalizer
		case "pre_tokenizer":
			dst = &raw.preTok
		case "post_processor":
			dst = &raw.post
		case "decoder":
			dst = &raw.decoder
		case "model":
			if b.sawModel {
				return s.errorf("\"model\" given twice")
			}
			return b.model(s)
		default:
			return s.skip(0)
		}
		v, err := s.raw()
		*dst = v
		return err
	})
	if err == nil {
		err = s.end()
	}
	if err != nil {
		return nil, err
	}
	if !b.sawModel {
		return nil, fmt.Errorf("%s: no \"model\" section", name)
	}
	if t, err = b.finish(raw.added); err != nil {
		return nil, err
	}
	if t.norm, err = parseNormalizer(name, raw.normalizer); err != nil {
		return nil, err
	}
	if err := checkPreTokenizer(name, raw.preTok, t.norm); err != nil {
		return nil, err
	}
	if err := t.parsePostProcessor(name, raw.post); err != nil {
		return nil, err
	}
	if t.dec, err = parseDecoder(name, raw.decoder); err != nil {
		return nil, err
	}
	t.buildTries()
	if !t.byteFallbackComplete() && t.unk < 0 {
		return nil, fmt.Errorf("%s: model has no unk_token and no complete byte fallback: some text could not be encoded", name)
	}
	t.bos, t.eos = -1, -1
	if len(t.prefix) > 0 {
		t.bos = t.prefix[0]
	}
	return t, nil
}
