package engine

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"perch/engine/gemma4"
)

// GenerationConfig is generation_config.json: the model's own sampling
// defaults and stop tokens.
type GenerationConfig struct {
	EOS            []int32
	Temperature    *float32 `json:"temperature"`
	TopP           *float32 `json:"top_p"`
	TopK           *int     `json:"top_k"`
	DoSample       *bool    `json:"do_sample"`
	SuppressTokens []int32  `json:"suppress_tokens"`
}

// loadGenerationConfig reads dir/generation_config.json; a missing file is
// not an error (mlx-lm-style defaults then apply).
func loadGenerationConfig(dir string) (*GenerationConfig, error) {
	path := filepath.Join(dir, "generation_config.json")
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return &GenerationConfig{}, nil
	}
	if err != nil {
		return nil, err
	}
	g, err := parseGenerationConfig(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return g, nil
}

func parseGenerationConfig(data []byte) (*GenerationConfig, error) {
	if len(data) > 1<<20 {
		return nil, fmt.Errorf("%d bytes, over the 1 MiB limit", len(data))
	}
	g := &GenerationConfig{}
	if err := json.Unmarshal(data, g); err != nil {
		return nil, fmt.Errorf("not a generation config: %w", err)
	}
	var raw map[string]json.RawMessage
	json.Unmarshal(data, &raw)
	if e, ok := raw["eos_token_id"]; ok && string(e) != "null" {
		ids, err := gemma4.IntOrList(e)
		if err != nil {
			return nil, fmt.Errorf("eos_token_id: %w", err)
		}
		g.EOS = ids
	}
	return g, nil
}

// generationIgnored are the keys of a published generation_config.json
// that parseGenerationConfig does not read, and why.
var generationIgnored = map[string]string{
	"bos_token_id":         "the chat template writes <bos>",
	"pad_token_id":         "one sequence at a time: nothing is padded",
	"transformers_version": "provenance",
}
