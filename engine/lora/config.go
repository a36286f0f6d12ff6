// Package lora holds LoRA adapters of Gemma-4 models in mlx-lm's format
// (adapters.safetensors + adapter_config.json): reading and writing them,
// mlx-lm's initialisation, binding the leaves to a loaded model's
// projections on a backend, and fusing them into base weights.
package lora

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"perch/engine/gemma4"
)

// File names of an adapter folder (mlx-lm's).
const (
	ConfigFile  = "adapter_config.json"
	WeightsFile = "adapters.safetensors"
)

// Params are mlx-lm's lora_parameters.
type Params struct {
	Rank    int      `json:"rank"`
	Scale   float64  `json:"scale"`
	Dropout float64  `json:"dropout"`
	Keys    []string `json:"keys,omitempty"`
}

// Config is mlx-lm's adapter_config.json. Fields Perch does not use (the
// training arguments mlx-lm writes beside these) are kept in Extra and
// written back unchanged.
type Config struct {
	FineTuneType string // "lora" (the only type Perch trains or applies)
	NumLayers    int    // the last NumLayers layers are adapted; <= 0: all
	LoRA         Params
	Extra        map[string]json.RawMessage
}

// DefaultKeys are the projections Perch adapts unless told otherwise: the
// attention and MLP projections of every layer that has them.
var DefaultKeys = []string{
	"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
	"mlp.gate_proj", "mlp.up_proj", "mlp.down_proj",
}

// DefaultConfig is rank 8, scale 20 (mlx-lm's defaults), no dropout, the
// default keys, on every layer.
func DefaultConfig() Config {
	return Config{FineTuneType: "lora", NumLayers: -1, LoRA: Params{Rank: 8, Scale: 20, Keys: append([]string(nil), DefaultKeys...)}}
}

// maxConfigBytes caps adapter_config.json (mlx-lm's are ~1 KB).
const maxConfigBytes = 1 << 20

// maxRank bounds the rank a config may ask for.
const maxRank = 4096

// ParseConfig reads adapter_config.json.
func ParseConfig(data []byte) (Config, error) {
	if len(data) > maxConfigBytes {
		return Config{}, fmt.Errorf("%s: %d bytes, over the %d-byte limit", ConfigFile, len(data), maxConfigBytes)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return Config{}, fmt.Errorf("%s: not a JSON object: %w", ConfigFile, err)
	}
	c := Config{FineTuneType: "lora", Extra: map[string]json.RawMessage{}}
	for k, v := range raw {
		var err error
		switch k {
		case "fine_tune_type":
			err = json.Unmarshal(v, &c.FineTuneType)
		case "num_layers":
			err = json.Unmarshal(v, &c.NumLayers)
		case "lora_parameters":
			err = json.Unmarshal(v, &c.LoRA)
		default:
			c.Extra[k] = v
		}
		if err != nil {
			return Config{}, fmt.Errorf("%s: %s: %w", ConfigFile, k, err)
		}
	}
	if _, ok := raw["lora_parameters"]; !ok {
		return Config{}, fmt.Errorf("%s has no lora_parameters", ConfigFile)
	}
	if len(c.Extra) == 0 {
		c.Extra = nil
	}
	return c, c.Validate()
}

// Validate checks the fields Perch uses.
func (c Config) Validate() error {
	switch {
	case c.FineTuneType != "lora":
		return fmt.Errorf("%s: fine_tune_type %q is not supported (Perch trains and applies \"lora\" adapters)", ConfigFile, c.FineTuneType)
	case c.LoRA.Rank < 1 || c.LoRA.Rank > maxRank:
		return fmt.Errorf("%s: rank %d is outside 1..%d", ConfigFile, c.LoRA.Rank, maxRank)
	case math.IsNaN(c.LoRA.Scale) || math.IsInf(c.LoRA.Scale, 0):
		return fmt.Errorf("%s: scale %v is not a finite number", ConfigFile, c.LoRA.Scale)
	case !(c.LoRA.Dropout >= 0 && c.LoRA.Dropout < 1):
		return fmt.Errorf("%s: dropout %v is outside [0, 1)", ConfigFile, c.LoRA.Dropout)
	}
	for _, k := range c.LoRA.Keys {
		if _, _, err := parseKey(k); err != nil {
			return err
		}
	}
	return nil
}

// MarshalJSON writes mlx-lm's layout (Extra first, then Perch's fields).
func (c Config) MarshalJSON() ([]byte, error) {
	out := map[string]any{}
	for k, v := range c.Extra {
		out[k] = v
	}
	out["fine_tune_type"] = c.FineTuneType
	out["num_layers"] = c.NumLayers
	out["lora_parameters"] = c.LoRA
	return json.MarshalIndent(out, "", "    ")
}

// keyRe matches a full module path: any prefix, then layers.N.module.
var keyRe = regexp.MustCompile(`(?:^|\.)layers\.(\d+)\.(.+)$`)

// parseKey splits a key into a layer (-1 for a relative key, which applies
// to every adapted layer) and a module path, which must be one
// gemma4.ProjectionModules names.
func parseKey(k string) (layer int, module string, err error) {
	layer, module = -1, k
	if m := keyRe.FindStringSubmatch(k); m != nil {
		n, err := strconv.Atoi(m[1])
		if err != nil || n > 1<<20 {
			return 0, "", fmt.Errorf("%s: key %q has a bad layer number", ConfigFile, k)
		}
		layer, module = n, m[2]
	}
	for _, p := range gemma4.ProjectionModules {
		if module == p {
			return layer, module, nil
		}
	}
	return 0, "", fmt.Errorf("%s: key %q is not a projection Perch can adapt (%s)", ConfigFile, k, strings.Join(gemma4.ProjectionModules, ", "))
}
