package engine

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// processorConfig is what processor_config.json says about media inputs.
type processorConfig struct {
	ImageProcessor struct {
		MaxSoftTokens int `json:"max_soft_tokens"`
	} `json:"image_processor"`
	AudioMsPerToken int `json:"audio_ms_per_token"`
	AudioSeqLength  int `json:"audio_seq_length"`
}

// loadProcessorConfig reads processor_config.json; absent, the Gemma-4
// processors' own values apply (40 ms per audio token, at most 750).
func loadProcessorConfig(dir string) (*processorConfig, error) {
	p := &processorConfig{}
	data, err := os.ReadFile(filepath.Join(dir, "processor_config.json"))
	if err == nil {
		if len(data) > 1<<20 {
			return nil, fmt.Errorf("processor_config.json is %d bytes, over the 1 MiB limit", len(data))
		}
		if err := json.Unmarshal(data, p); err != nil {
			return nil, fmt.Errorf("processor_config.json: %w", err)
		}
	} else if !os.IsNotExist(err) {
		return nil, err
	}
	if p.AudioMsPerToken <= 0 {
		p.AudioMsPerToken = 40
	}
	if p.AudioSeqLength <= 0 {
		p.AudioSeqLength = 750
	}
	return p, nil
}
