package engine

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestPublishedGenerationConfigs: every key of the published
// generation_config.json files is read or knowingly ignored, and the stop
// ids and sampling defaults come through.
func TestPublishedGenerationConfigs(t *testing.T) {
	read := map[string]bool{"eos_token_id": true}
	ty := reflect.TypeOf(GenerationConfig{})
	for i := 0; i < ty.NumField(); i++ {
		if name, _, _ := strings.Cut(ty.Field(i).Tag.Get("json"), ","); name != "" {
			read[name] = true
		}
	}
	files, _ := filepath.Glob(filepath.Join("gemma4", "testdata", "published", "*", "generation_config.json"))
	if len(files) < 5 {
		t.Fatalf("%d published generation configs", len(files))
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var keys map[string]json.RawMessage
		json.Unmarshal(raw, &keys)
		for k := range keys {
			if !read[k] && generationIgnored[k] == "" {
				t.Errorf("%s: key %q neither read nor knowingly ignored", f, k)
			}
		}
		g, err := parseGenerationConfig(raw)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(g.EOS, []int32{1, 106, 50}) || g.Temperature == nil || *g.Temperature != 1 || g.TopK == nil || *g.TopK != 64 {
			t.Errorf("%s: parsed %+v", f, g)
		}
	}
}
