package tokenizer

import (
	"encoding/json"
	"fmt"
	"strings"
)

// component is the JSON shape shared by tokenizer.json's normalizer,
// pre_tokenizer, post_processor and decoder objects.
type component struct {
	Type    string `json:"type"`
	Pattern *struct {
		String *string `json:"String"`
		Regex  *string `json:"Regex"`
	} `json:"pattern"`
	Content       *string        `json:"content"`
	Prepend       *string        `json:"prepend"`
	Normalizers   []component    `json:"normalizers"`
	Pretokenizers []component    `json:"pretokenizers"`
	Decoders      []component    `json:"decoders"`
	Start         int            `json:"start"`
	Stop          int            `json:"stop"`
	Single        []templateItem `json:"single"`
	SpecialTokens map[string]struct {
		IDs []int64 `json:"ids"`
	} `json:"special_tokens"`
}

type templateItem struct {
	SpecialToken *struct {
		ID string `json:"id"`
	} `json:"SpecialToken"`
	Sequence *struct {
		ID string `json:"id"`
	} `json:"Sequence"`
}

func decodeComponent(name, field string, raw []byte) (*component, error) {
	if raw == nil || string(raw) == "null" {
		return nil, nil
	}
	var c component
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("%s: %s: %v", name, field, err)
	}
	return &c, nil
}

// normOp is one normalizer step: replace every from with to, or prepend to
// to a non-empty string (from == "").
type normOp struct {
	from, to string
}

func parseNormalizer(name string, raw []byte) ([]normOp, error) {
	c, err := decodeComponent(name, "normalizer", raw)
	if err != nil || c == nil {
		return nil, err
	}
	var ops []normOp
	var add func(c component) error
	add = func(c component) error {
		switch c.Type {
		case "Sequence":
			for _, sub := range c.Normalizers {
				if err := add(sub); err != nil {
					return err
				}
			}
			return nil
		case "Replace":
			from, to, err := stringReplace(c)
			if err != nil {
				return fmt.Errorf("%s: normalizer Replace: %v", name, err)
			}
			ops = append(ops, normOp{from, to})
			return nil
		case "Prepend":
			if c.Prepend == nil || *c.Prepend == "" {
				return fmt.Errorf("%s: normalizer Prepend without text", name)
			}
			ops = append(ops, normOp{"", *c.Prepend})
			return nil
		}
		return fmt.Errorf("%s: normalizer %q is not supported (Gemma uses Replace)", name, c.Type)
	}
	return ops, add(*c)
}

func stringReplace(c component) (from, to string, err error) {
	if c.Pattern == nil || c.Pattern.String == nil {
		return "", "", fmt.Errorf("only a String pattern is supported")
	}
	if *c.Pattern.String == "" || c.Content == nil {
		return "", "", fmt.Errorf("empty pattern or missing content")
	}
	return *c.Pattern.String, *c.Content, nil
}

// normalize applies the normalizer to one stretch of text between added
// tokens.
func (t *Tokenizer) normalize(s string) string {
	for _, op := range t.norm {
		if op.from == "" {
			if s != "" {
				s = op.to + s
			}
		} else {
			s = strings.ReplaceAll(s, op.from, op.to)
		}
	}
	return s
}

// checkPreTokenizer accepts only pre-tokenizers that cannot split the
// normalized text: Gemma's Split(" ") after the normalizer has turned every
// ' ' into '▁'.
func checkPreTokenizer(name string, raw []byte, norm []normOp) error {
	c, err := decodeComponent(name, "pre_tokenizer", raw)
	if err != nil || c == nil {
		return err
	}
	var check func(c component) error
	check = func(c component) error {
		switch c.Type {
		case "Sequence":
			for _, sub := range c.Pretokenizers {
				if err := check(sub); err != nil {
					return err
				}
			}
			return nil
		case "Split":
			if c.Pattern != nil && c.Pattern.String != nil && removedBy(norm, *c.Pattern.String) {
				return nil
			}
		}
		return fmt.Errorf("%s: pre_tokenizer %q is not supported (only a Split on text the normalizer removes, as in Gemma)", name, c.Type)
	}
	return check(*c)
}

// removedBy reports whether the normalizer leaves no occurrence of p.
func removedBy(norm []normOp, p string) bool {
	removed := false
	for _, op := range norm {
		switch {
		case op.from == p && !strings.Contains(op.to, p):
			removed = true
		case strings.Contains(op.to, p):
			removed = false
		}
	}
	return p != "" && removed
}

func (t *Tokenizer) parsePostProcessor(name string, raw []byte) error {
	c, err := decodeComponent(name, "post_processor", raw)
	if err != nil || c == nil {
		return err
	}
	if c.Type != "TemplateProcessing" {
		return fmt.Errorf("%s: post_processor %q is not supported (Gemma uses TemplateProcessing)", name, c.Type)
	}
	seenA := false
	for _, it := range c.Single {
		switch {
		case it.Sequence != nil:
			if it.Sequence.ID != "A" || seenA {
				return fmt.Errorf("%s: post_processor.single: unexpected sequence %q", name, it.Sequence.ID)
			}
			seenA = true
		case it.SpecialToken != nil:
			st, ok := c.SpecialTokens[it.SpecialToken.ID]
			if !ok || len(st.IDs) == 0 {
				return fmt.Errorf("%s: post_processor: special token %q has no ids", name, it.SpecialToken.ID)
			}
			for _, id := range st.IDs {
				if id < 0 || id >= int64(t.n) {
					return fmt.Errorf("%s: post_processor: id %d is not in the vocabulary", name, id)
				}
				if seenA {
					t.suffix = append(t.suffix, int32(id))
				} else {
					t.prefix = append(t.prefix, int32(id))
				}
			}
		default:
			return fmt.Errorf("%s: post_processor.single: unknown item", name)
		}
	}
	if !seenA {
		return fmt.Errorf("%s: post_processor.single has no $A", name)
	}
	return nil
}

// decoder is the decode chain Gemma uses: Replace* → ByteFallback? → Fuse?
// → Strip? (leading only).
type decoder struct {
	spaceJoin    bool // no decoder at all: HF joins tokens with ' '
	replace      []normOp
	byteFallback bool
	stripChar    string
	stripStart   int
}

func parseDecoder(name string, raw []byte) (decoder, error) {
	var d decoder
	c, err := decodeComponent(name, "decoder", raw)
	if err != nil {
		return d, err
	}
	if c == nil {
		d.spaceJoin = true
		return d, nil
	}
	steps := []component{*c}
	if c.Type == "Sequence" {
		steps = c.Decoders
	}
	stage := 0 // 0 replace, 1 after ByteFallback, 2 after Fuse, 3 after Strip
	for _, st := range steps {
		bad := false
		switch st.Type {
		case "Replace":
			from, to, err := stringReplace(st)
			if err != nil {
				return d, fmt.Errorf("%s: decoder Replace: %v", name, err)
			}
			bad = stage > 0
			d.replace = append(d.replace, normOp{from, to})
		case "ByteFallback":
			bad = stage > 0
			d.byteFallback, stage = true, 1
		case "Fuse":
			bad = stage > 1
			stage = 2
		case "Strip":
			bad = stage != 2 || st.Stop != 0 || st.Content == nil || len([]rune(*st.Content)) != 1 || st.Start < 0
			if !bad {
				d.stripChar, d.stripStart, stage = *st.Content, st.Start, 3
			}
		default:
			return d, fmt.Errorf("%s: decoder %q is not supported (Gemma uses Replace, ByteFallback, Fuse)", name, st.Type)
		}
		if bad {
			return d, fmt.Errorf("%s: decoder %s in this position is not supported (want Replace*, ByteFallback, Fuse, Strip(start only))", name, st.Type)
		}
	}
	return d, nil
}
