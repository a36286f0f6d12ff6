package processor

import (
	"fmt"
	"strings"

	"perch/engine/gemma4"
	"perch/engine/prompt"
	"perch/engine/tokenizer"
)

// specialIDs are the model's media token ids, from config.json.
type specialIDs struct {
	image, audio, video, boi, eoi, boa, eoa, pad int32
}

func specialIDsOf(c *gemma4.Config, tok *tokenizer.Tokenizer) specialIDs {
	ids := specialIDs{image: c.ImageTokenID, audio: c.AudioTokenID, video: c.VideoTokenID,
		boi: c.BOITokenID, eoi: c.EOITokenID, boa: c.BOATokenID, eoa: c.EOATokenID, pad: int32(c.Text.PadTokenID)}
	if ids.video == 0 { // HF adds <|video|> when a checkpoint's config lacks it
		ids.video, _ = tok.TokenID("<|video|>")
	}
	return ids
}

// placeholderText holds the tokens' texts, as the template writes them.
type placeholderText struct {
	image, audio, video, boi, eoi, boa, eoa string
}

func (s specialIDs) text(tok *tokenizer.Tokenizer) placeholderText {
	t := func(id int32) string {
		if id <= 0 {
			return ""
		}
		return tok.IDToken(id)
	}
	return placeholderText{image: t(s.image), audio: t(s.audio), video: t(s.video),
		boi: t(s.boi), eoi: t(s.eoi), boa: t(s.boa), eoa: t(s.eoa)}
}

// kindOf says which media a placeholder id stands for ("" for none).
func (s specialIDs) kindOf(id int32) prompt.PartType {
	switch {
	case id == 0:
	case id == s.image:
		return prompt.Image
	case id == s.audio:
		return prompt.Audio
	case id == s.video:
		return prompt.Video
	}
	return ""
}

// builder assembles the prompt ids in one pass: text is tokenized a piece
// at a time between soft-token runs, and each run's rows are recorded as it
// is written. It holds the only check that placeholders and attachments
// agree (in number and kind).
type builder struct {
	p           *Processor
	items       []item
	next        int // the next item a placeholder takes
	pending     strings.Builder
	ids         []int32
	placed      []Placed
	blocks      [][2]int // per visual run: its first position and length
	kinds       map[string]int
	answerStart int
}

func newBuilder(p *Processor, items []item) *builder {
	return &builder{p: p, items: items, kinds: map[string]int{}}
}

// flush tokenizes the text written since the last run.
func (b *builder) flush() {
	if b.pending.Len() == 0 {
		return
	}
	before := len(b.ids)
	b.ids = append(b.ids, b.p.tok.Encode(b.pending.String(), false)...) // the template writes <bos> itself
	b.kinds["text"] += len(b.ids) - before
	b.pending.Reset()
}

// run writes n copies of placeholder id as rows of the current placed item.
func (b *builder) run(id int32, n int, kind prompt.PartType) {
	b.flush()
	at := &b.placed[len(b.placed)-1]
	if kind != prompt.Audio {
		b.blocks = append(b.blocks, [2]int{len(b.ids), n})
	}
	for range n {
		at.Rows = append(at.Rows, len(b.ids))
		b.ids = append(b.ids, id)
	}
	b.kinds[string(kind)] += n
}

// take hands out the next attachment for a placeholder of kind.
func (b *builder) take(kind prompt.PartType, where string) (item, error) {
	if b.next >= len(b.items) {
		return item{}, fmt.Errorf("%s has more media placeholders than the %d attachments", where, len(b.items))
	}
	it := b.items[b.next]
	if it.Kind != kind {
		return item{}, fmt.Errorf("placeholder %d of %s is for %s but attachment %d (%s) is %s",
			b.next+1, where, kind, b.next+1, it.name, it.Kind)
	}
	b.next++
	return it, nil
}

// media writes an attachment's expansion: image -> boi + image*n + eoi;
// audio -> boa + audio*n + eoa; video -> per frame "mm:ss " + boi +
// video*n + eoi, joined by spaces, then its sound track as audio.
func (b *builder) media(m *gemma4.Media, name string) {
	t, ids := b.p.text, b.p.ids
	b.placed = append(b.placed, Placed{Media: m, Name: name})
	switch m.Kind {
	case prompt.Image:
		b.pending.WriteString(t.boi)
		b.run(ids.image, m.Tokens[0], prompt.Image)
		b.pending.WriteString(t.eoi)
	case prompt.Audio:
		b.pending.WriteString(t.boa)
		b.run(ids.audio, m.AudioTokens, prompt.Audio)
		b.pending.WriteString(t.eoa)
	case prompt.Video:
		for i, n := range m.Tokens {
			if i > 0 {
				b.pending.WriteByte(' ')
			}
			b.pending.WriteString(m.Stamps[i] + " " + t.boi)
			b.run(ids.video, n, prompt.Video)
			b.pending.WriteString(t.eoi)
		}
		if m.Track != nil {
			b.media(m.Track, name+" (sound)")
		}
	}
}

// expandText writes rendered template text, each media marker replaced by
// the next attachment's expansion.
func (b *builder) expandText(rendered string) error {
	rest := rendered
	for {
		j, kind := b.nextMarker(rest)
		if j < 0 {
			b.pending.WriteString(rest)
			return nil
		}
		it, err := b.take(kind, "the prompt")
		if err != nil {
			return err
		}
		b.pending.WriteString(rest[:j])
		b.media(it.Media, it.name)
		rest = rest[j+len(b.marker(kind)):]
	}
}

// expandIDs writes raw prompt ids, each placeholder id replaced by the
// next attachment's expansion (exactly as a rendered prompt's would be).
func (b *builder) expandIDs(raw []int32) error {
	for _, id := range raw {
		kind := b.p.ids.kindOf(id)
		if kind == "" {
			b.flush()
			b.ids = append(b.ids, id)
			b.kinds["text"]++
			continue
		}
		it, err := b.take(kind, "--prompt-ids")
		if err != nil {
			return err
		}
		b.media(it.Media, it.name)
	}
	return nil
}

func (b *builder) marker(kind prompt.PartType) string {
	switch kind {
	case prompt.Image:
		return b.p.text.image
	case prompt.Audio:
		return b.p.text.audio
	}
	return b.p.text.video
}

// nextMarker finds the first media marker in s.
func (b *builder) nextMarker(s string) (int, prompt.PartType) {
	best, kind := -1, prompt.PartType("")
	for _, k := range []prompt.PartType{prompt.Image, prompt.Audio, prompt.Video} {
		m := b.marker(k)
		if m == "" {
			continue
		}
		if j := strings.Index(s, m); j >= 0 && (best < 0 || j < best) {
			best, kind = j, k
		}
	}
	return best, kind
}

// finish checks that every attachment found its placeholder and that the
// ids are in the vocabulary, and lays out blocks and PLE ids.
func (b *builder) finish() (*Prepared, error) {
	b.flush()
	if b.next != len(b.items) {
		return nil, fmt.Errorf("%d attachments but the prompt has placeholders for only %d", len(b.items), b.next)
	}
	if len(b.ids) == 0 {
		return nil, fmt.Errorf("empty prompt")
	}
	V := b.p.cfg.Text.VocabSize
	for i, id := range b.ids {
		if id < 0 || int(id) >= V {
			return nil, fmt.Errorf("prompt token %d at position %d is outside the vocabulary (0..%d)", id, i, V-1)
		}
	}
	prep := &Prepared{IDs: b.ids, Media: b.placed, ByKind: b.kinds, AnswerStart: b.answerStart}
	if len(b.placed) == 0 {
		return prep, nil
	}
	prep.PLEIDs = append([]int32(nil), b.ids...)
	for _, pl := range b.placed {
		for _, r := range pl.Rows {
			prep.PLEIDs[r] = b.p.ids.pad
		}
	}
	if len(b.blocks) > 0 {
		prep.Blocks = make([]int, len(b.ids))
		for i := range prep.Blocks {
			prep.Blocks[i] = -1
		}
		for k, run := range b.blocks {
			for i := run[0]; i < run[0]+run[1]; i++ {
				prep.Blocks[i] = k
			}
		}
	}
	return prep, nil
}
