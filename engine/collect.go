package engine

import (
	"errors"
	"fmt"
	"strings"
)

// ErrNoResult ends an answer whose channel closed without a Done or Error.
var ErrNoResult = errors.New("the model stopped without finishing")

// Collector accumulates one generation's events into what every front end
// shows: the text and thinking so far, where the request stands, and how it
// ended. Exactly one ending counts; events after it are ignored.
type Collector struct {
	text, thinking strings.Builder
	Tokens         int          // token events seen
	Position       int          // requests ahead while queued
	Stage          Stage        // the latest progress stage ("" before any)
	Fraction       float64      // of Stage
	Done           bool         // a Done or Error event arrived (or the channel closed)
	Stats          *Stats       // from Done
	StopReason     string       // from Done
	Err            error        // from Error, or ErrNoResult
	Calls          []ParsedCall // tool calls, in order
}

// Add takes one event.
func (c *Collector) Add(ev Event) {
	if c.Done {
		return
	}
	switch ev.Kind {
	case EventQueued:
		c.Position = ev.Position
	case EventProgress:
		c.Position, c.Stage, c.Fraction = 0, ev.Stage, ev.Fraction
	case EventToken:
		c.Tokens++
		if ev.Token.Thinking {
			c.thinking.WriteString(ev.Token.Text)
		} else {
			c.text.WriteString(ev.Token.Text)
		}
	case EventToolCall:
		c.Calls = append(c.Calls, ev.Call)
	case EventDone:
		c.Done, c.Stats, c.StopReason = true, ev.Stats, ev.StopReason
	case EventError:
		c.Done, c.Err = true, ev.Err
	}
}

// Close records the end of the channel: an answer still open failed.
func (c *Collector) Close() {
	if !c.Done {
		c.Done, c.Err = true, ErrNoResult
	}
}

// Text is the answer so far.
func (c *Collector) Text() string { return c.text.String() }

// Thinking is the thought channel so far.
func (c *Collector) Thinking() string { return c.thinking.String() }

// Cancelled reports an answer stopped by its caller.
func (c *Collector) Cancelled() bool { return c.StopReason == StopCancelled }

// Status says in the user's words where the request stands ("Waiting for 2
// requests ahead…", "Looking at the image… 40%"); "" once tokens flow or
// when there is nothing to say. It is the one place stages become words.
func (c *Collector) Status() string {
	switch {
	case c.Done || c.Tokens > 0:
		return ""
	case c.Stage == "" && c.Position > 0:
		s := "s"
		if c.Position == 1 {
			s = ""
		}
		return fmt.Sprintf("Waiting for %d request%s ahead…", c.Position, s)
	case c.Stage == "":
		return ""
	}
	return StageStatus(c.Stage, c.Fraction)
}

// StageStatus is a stage in the user's words, with its percentage while
// under way.
func StageStatus(s Stage, fraction float64) string {
	name, ok := map[Stage]string{StageLoad: "Loading the model", StageImage: "Looking at the image",
		StageAudio: "Listening", StageVideo: "Watching the video", StagePrefill: "Reading"}[s]
	if !ok {
		name = strings.ToUpper(string(s[:min(1, len(s))])) + string(s[min(1, len(s)):])
	}
	if fraction > 0 && fraction < 1 {
		return fmt.Sprintf("%s… %d%%", name, int(fraction*100))
	}
	return name + "…"
}

// Collect reads events to the end of the channel into a Collector; each,
// when set, sees every event once the collector has taken it.
func Collect(events <-chan Event, each func(Event, *Collector)) *Collector {
	c := &Collector{}
	for ev := range events {
		c.Add(ev)
		if each != nil {
			each(ev, c)
		}
	}
	c.Close()
	return c
}
