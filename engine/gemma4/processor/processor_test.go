package processor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"perch/engine/prompt"
	"perch/media/picture"
)

const testdata = "../../../testdata"

func tinyProcessor(t *testing.T, o Options) *Processor {
	t.Helper()
	p, err := Load(filepath.Join(testdata, "models", "text-tiny"), o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func fixture(t *testing.T, name, file string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testdata, "goldens", name, file))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestChatPromptMatchesGoldenIDs: messages rendered by the model's template
// and tokenized give the reference ids (template goldens, tiny tokenizer).
func TestChatPromptMatchesGoldenIDs(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "chattemplate", "testdata", "template-golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Cases []struct {
			Name     string `json:"name"`
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
			Tools  json.RawMessage `json:"tools"`
			Kwargs map[string]any  `json:"template_kwargs"`
			AddGen bool            `json:"add_generation_prompt"`
			IDs    []int32         `json:"ids"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	p := tinyProcessor(t, Options{})
	tried := 0
	for _, c := range g.Cases {
		// Requests carry plain-text turns (and a thinking flag); cases with
		// tools, tool calls or media are the template package's.
		if string(c.Tools) != "null" || !c.AddGen {
			continue
		}
		o := PrepareOptions{EnableThinking: c.Kwargs["enable_thinking"] == true}
		var msgs []prompt.Message
		plain := true
		for _, m := range c.Messages {
			var text string
			if json.Unmarshal(m.Content, &text) != nil || m.Role == "tool" {
				plain = false
				break
			}
			msgs = append(msgs, prompt.TextMessage(prompt.Role(m.Role), text))
		}
		if !plain {
			continue
		}
		tried++
		got, err := p.Prepare(context.Background(), msgs, o)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if !slices.Equal(got.IDs, c.IDs) {
			t.Errorf("%s: ids %v\nwant %v", c.Name, got.IDs, c.IDs)
		}
	}
	if tried < 4 {
		t.Fatalf("only %d golden cases are plain-text chats", tried)
	}
	t.Logf("%d plain-text golden conversations matched", tried)
}

// TestOnePassMatchesWholeTextTokenizing: expanding placeholders while
// tokenizing piece by piece gives exactly the ids of expanding the rendered
// text first and tokenizing it whole (the reference processor's order),
// and the rows it records are where the soft tokens are.
func TestOnePassMatchesWholeTextTokenizing(t *testing.T) {
	p := tinyProcessor(t, Options{})
	img, wav := fixture(t, "vision-tiny", "image.png"), fixture(t, "audio-tiny", "audio.wav")
	msgs := []prompt.Message{
		prompt.TextMessage(prompt.System, "Be brief."),
		{Role: prompt.User, Content: []prompt.Part{{Type: prompt.Image, Data: img}, {Type: prompt.Text, Text: " What is this? "},
			{Type: prompt.Audio, Data: wav}, {Type: prompt.Text, Text: "\nand this\n\n"}}},
		prompt.TextMessage(prompt.Assistant, "A photo and a sound."),
		{Role: prompt.User, Content: []prompt.Part{{Type: prompt.Text, Text: "Again:"}, {Type: prompt.Image, Data: img}}},
	}
	ctx := context.Background()
	got, err := p.Prepare(ctx, msgs, PrepareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rendered, err := p.render(ctx, msgs, PrepareOptions{}, true)
	if err != nil {
		t.Fatal(err)
	}
	// The reference: replace each marker by its expansion, then tokenize once.
	tx := p.text
	var sb strings.Builder
	rest := rendered
	for _, m := range got.Media {
		marker := map[prompt.PartType]string{prompt.Image: tx.image, prompt.Audio: tx.audio}[m.Kind]
		j := strings.Index(rest, marker)
		if j < 0 {
			t.Fatalf("no %s marker left in %q", m.Kind, rest)
		}
		sb.WriteString(rest[:j])
		if m.Kind == prompt.Image {
			sb.WriteString(tx.boi + strings.Repeat(tx.image, m.Tokens[0]) + tx.eoi)
		} else {
			sb.WriteString(tx.boa + strings.Repeat(tx.audio, m.AudioTokens) + tx.eoa)
		}
		rest = rest[j+len(marker):]
	}
	sb.WriteString(rest)
	want := p.tok.Encode(sb.String(), false)
	if !slices.Equal(got.IDs, want) {
		t.Fatalf("one pass:\n%v\nwhole text:\n%v", got.IDs, want)
	}
	if len(got.Media) != 3 {
		t.Fatalf("%d placed media, want 3", len(got.Media))
	}
	for _, m := range got.Media {
		ph := map[prompt.PartType]int32{prompt.Image: p.ids.image, prompt.Audio: p.ids.audio}[m.Kind]
		for _, r := range m.Rows {
			if got.IDs[r] != ph || got.PLEIDs[r] != p.ids.pad {
				t.Fatalf("%s row %d holds %d (PLE %d)", m.Name, r, got.IDs[r], got.PLEIDs[r])
			}
		}
	}
	if got.Blocks[got.Media[0].Rows[0]] != 0 || got.Blocks[got.Media[2].Rows[0]] != 1 || got.Blocks[got.Media[1].Rows[0]] != -1 {
		t.Fatalf("blocks: image %d, second image %d, audio %d", got.Blocks[got.Media[0].Rows[0]],
			got.Blocks[got.Media[2].Rows[0]], got.Blocks[got.Media[1].Rows[0]])
	}
	if got.Media[0].Media != got.Media[2].Media {
		t.Fatal("the same photo twice in one request was prepared twice")
	}
}

// TestAnsweredMarksTheAnswer: a training row renders as its prompt (the
// ids a chat request for messages[:-1] feeds) followed by the answer.
func TestAnsweredMarksTheAnswer(t *testing.T) {
	p := tinyProcessor(t, Options{})
	img := fixture(t, "vision-tiny", "image.png")
	msgs := []prompt.Message{
		{Role: prompt.User, Content: []prompt.Part{{Type: prompt.Image, Data: img}, {Type: prompt.Text, Text: "Which bird?"}}},
		prompt.TextMessage(prompt.Assistant, "A European perch, which is a fish."),
	}
	ctx := context.Background()
	row, err := p.Prepare(ctx, msgs, PrepareOptions{Answered: true})
	if err != nil {
		t.Fatal(err)
	}
	ask, err := p.Prepare(ctx, msgs[:1], PrepareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if row.AnswerStart != len(ask.IDs) || !slices.Equal(row.IDs[:row.AnswerStart], ask.IDs) {
		t.Fatalf("answer starts at %d; the prompt alone is %d ids\nrow %v\nask %v", row.AnswerStart, len(ask.IDs), row.IDs, ask.IDs)
	}
	answer := p.tok.Decode(row.IDs[row.AnswerStart:], false)
	if !strings.HasPrefix(answer, "A European perch, which is a fish.") {
		t.Fatalf("the answer's tokens decode to %q", answer)
	}
	if len(row.Media) != 1 || row.Media[0].Rows[0] >= row.AnswerStart {
		t.Fatalf("the photo's rows %v should sit in the prompt", row.Media[0].Rows)
	}
	if _, err := p.Prepare(ctx, msgs[:1], PrepareOptions{Answered: true}); err == nil {
		t.Fatal("a row whose last turn is the user's was accepted as answered")
	}
}

// TestPreparedMediaAreCachedByContent: asking about the same photo again
// (a later turn) decodes nothing; another budget prepares it anew.
func TestPreparedMediaAreCachedByContent(t *testing.T) {
	p := tinyProcessor(t, Options{Pictures: picture.NewPool(picture.PoolOptions{CacheBytes: 1})})
	img := fixture(t, "vision-tiny", "image.png")
	ask := func(o PrepareOptions) *Prepared {
		t.Helper()
		prep, err := p.Prepare(context.Background(), []prompt.Message{{Role: prompt.User,
			Content: []prompt.Part{{Type: prompt.Image, Data: img}, {Type: prompt.Text, Text: "hi"}}}}, o)
		if err != nil {
			t.Fatal(err)
		}
		return prep
	}
	before := picture.Decodes()
	first := ask(PrepareOptions{})
	second := ask(PrepareOptions{})
	if n := picture.Decodes() - before; n != 1 || first.Media[0].Media != second.Media[0].Media {
		t.Fatalf("two turns about one photo decoded it %d times", n)
	}
	ask(PrepareOptions{ImageTokens: 70})
	if n := picture.Decodes() - before; n != 2 {
		t.Fatalf("a new budget should prepare the photo again (decodes %d)", n)
	}
	// A part that carries its hash is known by it, not hashed again: the
	// same bytes declared under another hash are another entry.
	declared := func(hash string) *Prepared {
		t.Helper()
		prep, err := p.Prepare(context.Background(), []prompt.Message{{Role: prompt.User,
			Content: []prompt.Part{{Type: prompt.Image, Data: img, Hash: hash}, {Type: prompt.Text, Text: "hi"}}}}, PrepareOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return prep
	}
	sum := sha256.Sum256(img)
	if prep := declared(hex.EncodeToString(sum[:])); prep.Media[0].Media != first.Media[0].Media || picture.Decodes()-before != 2 {
		t.Fatalf("the photo under its own hash was prepared again (decodes %d)", picture.Decodes()-before)
	}
	if declared("another"); picture.Decodes()-before != 3 {
		t.Fatalf("a declared hash was not the key: decodes %d, want 3", picture.Decodes()-before)
	}
}

// TestLimitsApplyBeforeWork: text that cannot fit is refused from its
// length, before rendering or tokenizing; images over the request's pixel
// budget are refused from their headers, before any is decoded.
func TestLimitsApplyBeforeWork(t *testing.T) {
	p := tinyProcessor(t, Options{MaxRequestPixels: 1000})
	huge := strings.Repeat("perch ", 5<<20) // 30 MB
	_, err := p.Prepare(context.Background(), []prompt.Message{prompt.TextMessage(prompt.User, huge)}, PrepareOptions{Context: 4096})
	var ce *ContextError
	if !errors.As(err, &ce) || !ce.AtLeast || ce.Context != 4096 || !strings.Contains(err.Error(), "at least") {
		t.Fatalf("30 MB of text: %v (want the length bound's refusal)", err)
	}
	img := fixture(t, "vision-tiny", "image.png")
	info, err := picture.Config(img)
	if err != nil {
		t.Fatal(err)
	}
	if info.Width*info.Height > 1000 {
		before := picture.Decodes()
		_, err = p.Prepare(context.Background(), []prompt.Message{{Role: prompt.User,
			Content: []prompt.Part{{Type: prompt.Image, Data: img}}}}, PrepareOptions{})
		if err == nil || !strings.Contains(err.Error(), "megapixels") || picture.Decodes() != before {
			t.Fatalf("over the pixel budget: %v (decodes %d)", err, picture.Decodes()-before)
		}
	} else {
		t.Fatalf("fixture image is %dx%d, too small for this test", info.Width, info.Height)
	}
}
