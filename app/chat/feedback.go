package chat

import (
	"errors"
	"fmt"
	"strings"

	"perch/app/history"
	"perch/ui"
)

// AdapterChoice keeps the adapter new conversations, quick-ask and the
// local API answer with, and names adapters.
type AdapterChoice interface {
	Default() string
	SetDefault(id string) error
	// Name is the adapter's name, "" when there is no such adapter.
	Name(id string) string
	// Dir is the adapter's folder, "" when there is no such adapter.
	Dir(id string) string
}

// adapterFolder is the folder of the adapter convID answers with ("" none).
func (s *Service) adapterFolder(convID string) string {
	id, _ := s.Adapter(convID)
	if id == "" {
		return ""
	}
	return s.Choice.Dir(id)
}

// adapterSuffix is " + my-style" when convID answers with an adapter.
func (s *Service) adapterSuffix(convID string) string {
	if _, name := s.Adapter(convID); name != "" {
		return " + " + name
	}
	return ""
}

var _ ui.Feedback = (*Service)(nil)

// Rate implements ui.Feedback: the rating belongs to the version of the
// answer in use.
func (s *Service) Rate(convID, answerID string, r ui.Rating) error {
	m, err := s.answerIn(convID, answerID)
	if err != nil {
		return err
	}
	return s.store.SetRating(m.ID, m.Version, int(r))
}

// Correct implements ui.Feedback: the user's text becomes the answer's
// newest version; the version it replaces stays on record (and, unless
// the user liked it, is the worse side of a preference pair).
func (s *Service) Correct(convID, answerID, text string) (ui.Message, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return ui.Message{}, errors.New("the correction is empty")
	}
	m, err := s.answerIn(convID, answerID)
	if err != nil {
		return ui.Message{}, err
	}
	if m.State == history.Streaming {
		return ui.Message{}, errors.New("wait for the answer to finish before correcting it")
	}
	m.Text, m.Thinking, m.Origin, m.State, m.Error = text, "", history.OriginEdited, history.Done, ""
	m.Stats = history.Stats{}
	if err := s.store.NewVersion(&m); err != nil {
		return ui.Message{}, fmt.Errorf("could not save your correction: %w", err)
	}
	return toUI(m), nil
}

func (s *Service) answerIn(convID, answerID string) (history.Message, error) {
	ms, err := s.store.Messages(convID)
	if err != nil {
		return history.Message{}, err
	}
	m, ok := find(ms, answerID)
	if !ok || m.Role != "assistant" {
		return history.Message{}, errors.New("that answer is no longer in this conversation")
	}
	return m, nil
}

// addRatings fills in the rating of each answer's version in use.
func (s *Service) addRatings(convID string, ms []history.Message, out []ui.Message) error {
	rs, err := s.store.Ratings(convID)
	if err != nil || len(rs) == 0 {
		return err
	}
	for i, m := range ms {
		out[i].Rating = ui.Rating(rs[history.VersionKey{MessageID: m.ID, Version: m.Version}])
	}
	return nil
}

// Adapter implements ui.Feedback.
func (s *Service) Adapter(convID string) (id, name string) {
	if s.Choice == nil {
		return "", ""
	}
	id = s.Choice.Default()
	if convID != "" {
		var err error
		if id, err = s.store.ConversationAdapter(convID, id); err != nil {
			return "", ""
		}
	}
	name = s.Choice.Name(id)
	if name == "" {
		return "", "" // deleted meanwhile: the base model answers
	}
	return id, name
}

// SetAdapter implements ui.Feedback.
func (s *Service) SetAdapter(convID, adapterID string) error {
	if s.Choice == nil {
		return errors.New("adapters are not available in this build")
	}
	if adapterID != "" && s.Choice.Name(adapterID) == "" {
		return errors.New("that adapter is no longer in your library")
	}
	if convID != "" {
		if err := s.store.SetConversationAdapter(convID, adapterID); err != nil {
			return err
		}
	}
	return s.Choice.SetDefault(adapterID)
}
