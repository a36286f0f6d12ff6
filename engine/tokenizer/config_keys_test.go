package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestPublishedTokenizerConfigs: every key of the published Gemma-4
// tokenizer_config.json files is read or knowingly ignored.
func TestPublishedTokenizerConfigs(t *testing.T) {
	read := map[string]bool{}
	ty := reflect.TypeOf(tokenizerConfig{})
	for i := 0; i < ty.NumField(); i++ {
		if name, _, _ := strings.Cut(ty.Field(i).Tag.Get("json"), ","); name != "" {
			read[name] = true
		}
	}
	files, _ := filepath.Glob(filepath.Join("..", "gemma4", "testdata", "published", "*", "tokenizer_config.json"))
	if len(files) < 5 {
		t.Fatalf("%d published tokenizer configs", len(files))
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(raw, &keys); err != nil {
			t.Fatal(err)
		}
		for k := range keys {
			if !read[k] && configIgnored[k] == "" {
				t.Errorf("%s: key %q neither read nor knowingly ignored", f, k)
			}
		}
	}
}
