package window

import (
	"context"
	"strings"
	"sync"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"perch/ui"
	"perch/ui/internal/fake"
)

// toolChat answers every message by calling a tool: a card waits for the
// user; allowed, the tool "runs" and the answer follows; denied, the
// answer says so; stopped (Esc), the answer ends with the call cut short.
// It also keeps a per-conversation server switch.
type toolChat struct {
	*fake.Chat
	decided chan ui.ToolAnswer
	mu      sync.Mutex
	always  bool // "always allow" was chosen: no more cards
	on      map[string]bool
}

func newToolChat() *toolChat {
	return &toolChat{Chat: fake.NewChat(), decided: make(chan ui.ToolAnswer, 8), on: map[string]bool{"notes": true, "weather": true}}
}

func (c *toolChat) Send(ctx context.Context, convID, text string, atts []ui.Attachment) (ui.Reply, error) {
	r, err := c.Chat.Send(context.Background(), convID, text, atts)
	if err != nil {
		return r, err
	}
	st := ui.NewStream()
	r.Stream = st
	go func() {
		call := ui.ToolCall{Lead: "Let me read your notes.", Name: "read_file", Server: "notes", Tool: "read_file",
			Arguments: `{"path":"garden.md"}`}
		c.mu.Lock()
		always := c.always
		c.mu.Unlock()
		answers := make(chan ui.ToolAnswer, 1)
		d := ui.ToolAllowOnce
		if !always {
			waiting := call
			waiting.Ask = func(a ui.ToolAnswer) { answers <- a; c.decided <- a }
			st.Publish(ui.Answer{Tools: []ui.ToolCall{waiting}})
			select {
			case d = <-answers:
			case <-ctx.Done():
				st.Publish(ui.Answer{Tools: []ui.ToolCall{call}, Done: true, State: ui.Stopped})
				return
			}
		}
		if d == ui.ToolAllowAlways {
			c.mu.Lock()
			c.always = true
			c.mu.Unlock()
		}
		call.Done = true
		text := "Your notes say: buy seeds."
		if d == ui.ToolDeny {
			call.Denied, call.Content, text = true, "denied: the user did not allow this call", "I could not read them."
		} else {
			call.Content = "# Garden\n[buy seeds](https://example.com/seeds)"
		}
		st.Publish(ui.Answer{Tools: []ui.ToolCall{call}, Text: text, Done: true, State: ui.Done})
	}()
	return r, nil
}

func (c *toolChat) ToolServers(convID string) ([]ui.ToolServer, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return []ui.ToolServer{{Name: "notes", On: c.on["notes"], State: "ready"}, {Name: "weather", On: c.on["weather"], State: "failed"}}, nil
}

func (c *toolChat) SetToolServer(convID, server string, on bool) error {
	c.mu.Lock()
	c.on[server] = on
	c.mu.Unlock()
	return nil
}

func toolHarness(t *testing.T) (*harness, *toolChat) {
	tc := newToolChat()
	h := newHarnessWith(t, func(h *harness, d *Deps) { d.Chat = tc })
	return h, tc
}

// ask sends a message and waits for its card; it returns the card's button.
func ask(t *testing.T, h *harness, button string) *widget.Button {
	mw := h.ui.Main
	mw.SetDraft("What do my garden notes say?")
	mw.Submit()
	var b *widget.Button
	h.loop.Until(t, "the card", func() bool {
		b = fake.VisibleButton(lastView(h).Tools.Root, button)
		return b != nil
	})
	return b
}

// TestCardAllowOnceShowsResultFoldedAsText: the card asks; Allow once
// runs the call; the result shows folded, as plain text (a Markdown link
// in it is not a link), and the answer follows.
func TestCardAllowOnceShowsResultFoldedAsText(t *testing.T) {
	h, tc := toolHarness(t)
	test.Tap(ask(t, h, "Allow once"))
	if d := <-tc.decided; d != ui.ToolAllowOnce {
		t.Fatalf("decided %v", d)
	}
	h.loop.Until(t, "the answer", func() bool { return !h.ui.Main.Busy() })
	v := lastView(h)
	card := v.Tools.Cards[0]
	if card.Waiting() || !strings.HasPrefix(card.Status.Text, "Done · # Garden") || card.Fold.Items[0].Open || !strings.Contains(card.Result.Text, "[buy seeds](https://example.com/seeds)") {
		t.Fatalf("card after the call: waiting %v, status %q, open %v, result %q", card.Waiting(), card.Status.Text, card.Fold.Items[0].Open, card.Result.Text)
	}
	if v.Msg.Text != "Your notes say: buy seeds." || v.Tools.Leads[0].Text != "Let me read your notes." {
		t.Fatalf("answer %q, lead %q", v.Msg.Text, v.Tools.Leads[0].Text)
	}
}

// TestCardDenyAndAlways: Deny runs nothing and says so; Always allow
// answers this card and no card asks for the next call.
func TestCardDenyAndAlways(t *testing.T) {
	h, tc := toolHarness(t)
	test.Tap(ask(t, h, "Deny"))
	h.loop.Until(t, "the answer", func() bool { return !h.ui.Main.Busy() })
	if d := <-tc.decided; d != ui.ToolDeny {
		t.Fatalf("decided %v", d)
	}
	if c := lastView(h).Tools.Cards[0]; c.Status.Text != "Denied: nothing ran" {
		t.Fatalf("denied card says %q", c.Status.Text)
	}
	test.Tap(ask(t, h, "Always allow this tool"))
	h.loop.Until(t, "the answer", func() bool { return !h.ui.Main.Busy() })
	if d := <-tc.decided; d != ui.ToolAllowAlways {
		t.Fatalf("decided %v", d)
	}
	mw := h.ui.Main
	mw.SetDraft("And again?")
	mw.Submit()
	h.loop.Until(t, "the answer", func() bool { return !mw.Busy() && lastView(h).Msg.State == ui.Done })
	if len(tc.decided) != 0 || !strings.HasPrefix(lastView(h).Tools.Cards[0].Status.Text, "Done") {
		t.Fatal("a card asked after always")
	}
}

// TestEscWhileTheCardWaits: Esc stops the answer; the card no longer asks
// and says the call was cut short.
func TestEscWhileTheCardWaits(t *testing.T) {
	h, _ := toolHarness(t)
	ask(t, h, "Allow once")
	escape(h.ui.Main.Window)
	h.loop.Until(t, "stopped", func() bool { return !h.ui.Main.Busy() })
	v := lastView(h)
	c := v.Tools.Cards[0]
	if v.Msg.State != ui.Stopped || c.Waiting() || !strings.HasPrefix(c.Status.Text, "Stopped before it finished") {
		t.Fatalf("state %s, waiting %v, status %q", v.Msg.State, c.Waiting(), c.Status.Text)
	}
}

// TestToolSwitchFlipsServers: the chat header says how many servers the
// conversation uses; its menu turns one off.
func TestToolSwitchFlipsServers(t *testing.T) {
	h, tc := toolHarness(t)
	sw := h.ui.Main.toolSw
	h.ui.Main.ShowConversation("")
	if sw == nil || !sw.Btn.Visible() || sw.Btn.Text != "Tools 2/2" {
		t.Fatalf("switch %+v", sw)
	}
	items := sw.Items()
	if len(items) != 2 || !items[0].Checked {
		t.Fatalf("menu %+v", items)
	}
	items[0].Action()
	if tc.on["notes"] || sw.Btn.Text != "Tools 1/2" {
		t.Fatalf("after turning notes off: %v, %q", tc.on, sw.Btn.Text)
	}
}

// TestQuickAskCardsAndEsc: quick-ask's answer shows the same card in the
// popup; Allow once there runs the call. Esc while a card waits closes
// the popup and stops the answer, so nothing waits unseen.
func TestQuickAskCardsAndEsc(t *testing.T) {
	h, tc := toolHarness(t)
	q := h.ui.QuickAsk()
	for _, esc := range []bool{false, true} {
		q.Show()
		test.Type(q.Comp.Entry, "Read my garden notes")
		q.Comp.Entry.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
		var b *widget.Button
		h.loop.Until(t, "the card in the popup", func() bool {
			b = fake.VisibleButton(q.Live.Tools.Root, "Allow once")
			return b != nil
		})
		if esc {
			q.Window.Canvas().Unfocus()
			q.Window.Canvas().OnTypedKey()(&fyne.KeyEvent{Name: fyne.KeyEscape})
			h.loop.Until(t, "stopped", func() bool { return !q.Busy() })
			if q.Visible() || len(tc.decided) != 0 {
				t.Fatalf("after Esc: visible %v, decided %d", q.Visible(), len(tc.decided))
			}
			continue
		}
		test.Tap(b)
		h.loop.Until(t, "the answer", func() bool { return !q.Busy() })
		if d := <-tc.decided; d != ui.ToolAllowOnce || q.AnswerText() != "Your notes say: buy seeds." {
			t.Fatalf("decided %v, answer %q", d, q.AnswerText())
		}
		q.Escape()
	}
}
