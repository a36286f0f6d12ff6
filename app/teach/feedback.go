// Package teach is the app side of fine-tuning: it turns the user's
// ratings, corrections and regenerations into SFT rows and preference
// pairs, hands them to the engine's trainer as rows (trainset.Example, their
// attachments named by hash; no dataset file on the way) while recording
// the run (its plan as versioned JSON), its metrics and checkpoints
// durably, and keeps the library of adapters the user owns: the best
// checkpoint is the one the engine's result names, and a finished adapter
// is linked in, not read back. ExportDataset writes the rows as an mlx-lm
// dataset folder for the user. It implements ui.Teacher and ui.Adapters.
package teach

import (
	"encoding/json"
	"fmt"
	"strings"

	"perch/app/history"
)

// maxContext is how many messages before an answer a row keeps (the
// newest; the first kept is the user's).
const maxContext = 8

// Turn is one message of a row's prompt.
type Turn struct {
	Role  string // "system", "user", "assistant" or "tool"
	Text  string
	Media []history.Attachment
	// Calls are an assistant turn's tool calls; Result is the call a tool
	// turn answers (Text is then its result).
	Calls  []history.ToolCall
	Result *history.ToolCall
}

// Row is one training row: the conversation before an answer, the answer
// to learn (Chosen) and, for a preference pair, the worse one.
type Row struct {
	Prompt   []Turn
	Chosen   string
	Rejected string // "" for an example
	Origin   string // what made it: "your correction", "thumbs up", …
	// Rated rows (KTO) have no Rejected: Chosen is an answer the user
	// liked (Disliked false) or disliked.
	Disliked bool
	Key      string // stable identity (conversation, turn, versions) for the split
	files    int    // media parts of a folder's row (its files are not attachments)
}

// Media counts the row's attachments.
func (r Row) Media() int {
	n := r.files
	for _, t := range r.Prompt {
		n += len(t.Media)
	}
	return n
}

// Rows are what the feedback gives.
type Rows struct {
	Examples []Row // one per taught answer: its best version
	Pairs    []Row // the best version against each worse one
	Unpaired int   // answers disliked with no better version
	Rated    []Row // every judged version on its own, liked or disliked (KTO)
}

// fromFeedback reads every taught answer in the history. system, when
// set, opens each prompt (chats are sent with it).
func fromFeedback(store *history.Store, system string) (Rows, error) {
	var out Rows
	taught, err := store.TaughtAnswers()
	if err != nil {
		return out, err
	}
	convs := map[string][]history.Message{}
	ratings := map[string]map[history.VersionKey]int{}
	for _, t := range taught {
		if _, ok := convs[t.ConversationID]; !ok {
			ms, err := store.Messages(t.ConversationID)
			if err != nil {
				return out, err
			}
			rs, err := store.Ratings(t.ConversationID)
			if err != nil {
				return out, err
			}
			convs[t.ConversationID], ratings[t.ConversationID] = ms, rs
		}
		versions, err := store.Versions(t.MessageID)
		if err != nil {
			return out, fmt.Errorf("teach: versions of an answer: %w", err)
		}
		ms := convs[t.ConversationID]
		if len(promptBefore(ms, t.Seq, system, nil)) == 0 {
			continue
		}
		// Each version is learned after the tool calls it made itself;
		// a pair is put after the better version's.
		promptOf := func(v history.Message) []Turn { return promptBefore(ms, t.Seq, system, v.Tools) }
		rate := func(v int) int {
			return ratings[t.ConversationID][history.VersionKey{MessageID: t.MessageID, Version: v}]
		}
		best, worse := judge(versions, rate)
		key := fmt.Sprintf("%s:%d", t.ConversationID, t.Seq)
		for _, w := range worse {
			out.Rated = append(out.Rated, Row{Prompt: promptOf(w), Chosen: w.Text, Disliked: true, Origin: "thumbs down",
				Key: fmt.Sprintf("%s:%d-", key, w.Version)})
		}
		switch {
		case best == nil && len(worse) > 0:
			out.Unpaired++
		case best != nil:
			origin := "thumbs up"
			if best.Origin == history.OriginEdited {
				origin = "your correction"
			}
			prompt := promptOf(*best)
			out.Examples = append(out.Examples, Row{Prompt: prompt, Chosen: best.Text, Origin: origin, Key: key})
			out.Rated = append(out.Rated, Row{Prompt: prompt, Chosen: best.Text, Origin: origin, Key: fmt.Sprintf("%s:%d+", key, best.Version)})
			for _, w := range worse {
				out.Pairs = append(out.Pairs, Row{Prompt: prompt, Chosen: best.Text, Rejected: w.Text, Origin: origin,
					Key: fmt.Sprintf("%s:%d>%d", key, best.Version, w.Version)})
			}
		}
	}
	return out, nil
}

// judge picks an answer's best version (the newest correction not
// disliked, else the newest liked one) and the versions worse than it:
// those disliked, and generated ones a correction replaced that the user
// did not like.
func judge(versions []history.Message, rate func(version int) int) (best *history.Message, worse []history.Message) {
	usable := func(v history.Message) bool {
		return strings.TrimSpace(v.Text) != "" && v.State != history.Streaming && v.State != history.Failed
	}
	lastEdit := 0
	for i := range versions {
		v := &versions[i]
		if !usable(*v) {
			continue
		}
		if v.Origin == history.OriginEdited && rate(v.Version) >= 0 {
			best, lastEdit = v, v.Version
		}
	}
	if best == nil {
		for i := range versions {
			if v := &versions[i]; usable(*v) && rate(v.Version) > 0 {
				best = v
			}
		}
	}
	for _, v := range versions {
		if !usable(v) || (best != nil && v.Version == best.Version) {
			continue
		}
		r := rate(v.Version)
		replaced := v.Origin != history.OriginEdited && v.Version < lastEdit && r <= 0
		if (r < 0 || replaced) && (best == nil || strings.TrimSpace(v.Text) != strings.TrimSpace(best.Text)) {
			worse = append(worse, v)
		}
	}
	return best, worse
}

// promptBefore is the conversation before turn seq, as the model saw it:
// answers that said nothing left out, at most maxContext messages, the
// first of them the user's; then own, the tool calls the answer at seq
// made before its text, with their results. Earlier answers' calls come
// as the model saw them too. A row with attachments carries no tool turns
// (the trainer takes one or the other): its answers keep their text only.
func promptBefore(ms []history.Message, seq int, system string, own []history.ToolRound) []Turn {
	var turns []Turn
	for _, m := range ms {
		if m.Seq >= seq {
			break
		}
		if m.Role != "user" && m.Role != "assistant" {
			continue
		}
		turns = append(turns, toolTurns(m.Tools)...)
		if m.Role == "assistant" && strings.TrimSpace(m.Text) == "" {
			continue
		}
		turns = append(turns, Turn{Role: m.Role, Text: m.Text, Media: m.Attachments})
	}
	if len(turns) > maxContext {
		turns = turns[len(turns)-maxContext:]
	}
	for len(turns) > 0 && turns[0].Role != "user" {
		turns = turns[1:]
	}
	if len(turns) == 0 || turns[len(turns)-1].Role != "user" {
		return nil // an answer must follow a user turn
	}
	turns = append(turns, toolTurns(own)...)
	if system != "" {
		turns = append([]Turn{{Role: "system", Text: system}}, turns...)
	}
	return withoutToolsIfMedia(turns)
}

// notFinished is a cut-short call's result, as the chat tells the model.
const notFinished = "the call did not finish (stopped by the user, or Perch quit)"

// toolTurns are an answer's rounds as turns: the assistant's calls, then
// a tool turn with each result.
func toolTurns(rounds []history.ToolRound) []Turn {
	var out []Turn
	for r, round := range rounds {
		if len(round.Calls) == 0 {
			continue
		}
		calls := append([]history.ToolCall(nil), round.Calls...)
		for i := range calls {
			if calls[i].ID == "" {
				calls[i].ID = fmt.Sprintf("call_%d_%d", r, i)
			}
			if !json.Valid(calls[i].Arguments) || len(calls[i].Arguments) == 0 || calls[i].Arguments[0] != '{' {
				calls[i].Arguments = json.RawMessage(`{}`)
			}
		}
		out = append(out, Turn{Role: "assistant", Text: round.Text, Calls: calls})
		for i := range calls {
			c := calls[i]
			if !c.Done {
				c.Content = notFinished
			}
			out = append(out, Turn{Role: "tool", Text: c.Content, Result: &c})
		}
	}
	return out
}

// withoutToolsIfMedia drops the tool turns of a prompt that has
// attachments (the calls' assistant turns keep their text, if any).
func withoutToolsIfMedia(turns []Turn) []Turn {
	media, tools := false, false
	for _, t := range turns {
		media = media || len(t.Media) > 0
		tools = tools || len(t.Calls) > 0 || t.Result != nil
	}
	if !media || !tools {
		return turns
	}
	var out []Turn
	for _, t := range turns {
		switch {
		case t.Result != nil:
			continue
		case len(t.Calls) > 0 && strings.TrimSpace(t.Text) == "":
			continue
		}
		t.Calls = nil
		out = append(out, t)
	}
	return out
}
