package tokenizer

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// tokenizerConfig is the part of tokenizer_config.json the tokenizer uses.
// Token fields may be a string or an AddedToken object {"content": …}.
type tokenizerConfig struct {
	BOS                json.RawMessage            `json:"bos_token"`
	EOS                json.RawMessage            `json:"eos_token"`
	AddBOS             *bool                      `json:"add_bos_token"`
	AddEOS             *bool                      `json:"add_eos_token"`
	CleanUp            *bool                      `json:"clean_up_tokenization_spaces"`
	AddedTokensDecoder map[string]json.RawMessage `json:"added_tokens_decoder"`
	AdditionalSpecial  json.RawMessage            `json:"additional_special_tokens"`
	ExtraSpecialTokens json.RawMessage            `json:"extra_special_tokens"`
}

// applyConfig reads special-token flags, bos/eos names, explicit
// add_bos_token/add_eos_token (which rebuild the post-processor as
// transformers' Gemma/Llama fast tokenizers do) and the decode clean-up flag.
func (t *Tokenizer) applyConfig(name string, data []byte) error {
	var c tokenizerConfig
	if err := json.Unmarshal(data, &c); err != nil {
		return fmt.Errorf("%s: %v", name, err)
	}
	for key, raw := range c.AddedTokensDecoder {
		var at struct {
			Content string `json:"content"`
			Special bool   `json:"special"`
		}
		id, err := strconv.ParseInt(key, 10, 32)
		if err != nil || json.Unmarshal(raw, &at) != nil {
			return fmt.Errorf("%s: added_tokens_decoder[%.20q] is malformed", name, key)
		}
		if at.Special && id >= 0 && id < int64(t.n) && t.IDToken(int32(id)) == at.Content {
			t.flags[id] |= flagSpecial
		}
	}
	for _, list := range []json.RawMessage{c.AdditionalSpecial, c.ExtraSpecialTokens} {
		for _, s := range tokenNames(list) {
			if id := t.lookup(s); id >= 0 {
				t.flags[id] |= flagSpecial
			}
		}
	}
	lookupName := func(field string, raw json.RawMessage) (int32, error) {
		names := tokenNames(raw)
		if len(names) == 0 {
			return -1, nil
		}
		id := t.lookup(names[0])
		if id < 0 {
			return -1, fmt.Errorf("%s: %s %q is not in the vocabulary", name, field, names[0])
		}
		return id, nil
	}
	bos, err := lookupName("bos_token", c.BOS)
	if err != nil {
		return err
	}
	eos, err := lookupName("eos_token", c.EOS)
	if err != nil {
		return err
	}
	if bos >= 0 {
		t.bos = bos
	}
	t.eos = eos
	if c.AddBOS != nil {
		t.prefix = nil
		if *c.AddBOS && bos >= 0 {
			t.prefix = []int32{bos}
		}
	}
	if c.AddEOS != nil {
		t.suffix = nil
		if *c.AddEOS && eos >= 0 {
			t.suffix = []int32{eos}
		}
	}
	// transformers defaults the clean-up to true when the key is absent, but
	// Gemma's files set it to false; absent means false here (HF tokenizers).
	t.cleanupDec = c.CleanUp != nil && *c.CleanUp
	return nil
}

// tokenNames reads a token name, an AddedToken object, or a list or map of
// either (one level only, so a deeply nested file costs one parse).
func tokenNames(raw json.RawMessage) []string {
	if n := tokenName(raw); n != "" {
		return []string{n}
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			return nil
		}
		for _, v := range m {
			list = append(list, v)
		}
	}
	var out []string
	for _, v := range list {
		if n := tokenName(v); n != "" {
			out = append(out, n)
		}
	}
	return out
}

func tokenName(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	switch raw[0] {
	case '"':
		var s string
		json.Unmarshal(raw, &s)
		return s
	case '{':
		var obj struct {
			Content string `json:"content"`
		}
		json.Unmarshal(raw, &obj)
		return obj.Content
	}
	return ""
}

// configIgnored are the keys of a published Gemma-4 tokenizer_config.json
// that applyConfig does not read, and why (chat_template is the chat
// template package's).
var configIgnored = map[string]string{
	"chat_template":    "read by engine/chattemplate",
	"backend":          "provenance",
	"processor_class":  "provenance",
	"tokenizer_class":  "provenance (the pipeline comes from tokenizer.json)",
	"model_max_length": "config.json's max_position_embeddings bounds the context",
	"padding_side":     "one sequence at a time: nothing is padded",
	"pad_token":        "one sequence at a time: nothing is padded",
	"unk_token":        "tokenizer.json's model.unk_token is the one used",
	"mask_token":       "no masked-language use",
	"response_schema":  "engine/chatoutput parses Gemma-4's output protocol itself",
	// Named control tokens: their ids and special flags come from
	// tokenizer.json's added tokens; the engine finds them by content.
	"audio_token": "by content", "boa_token": "by content", "boi_token": "by content", "eoa_token": "by content",
	"eoc_token": "by content", "eoi_token": "by content", "eot_token": "by content", "escape_token": "by content",
	"etc_token": "by content", "etd_token": "by content", "etr_token": "by content", "image_token": "by content",
	"soc_token": "by content", "sot_token": "by content", "stc_token": "by content", "std_token": "by content",
	"str_token": "by content", "think_token": "by content",
}
