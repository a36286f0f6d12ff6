package teach

import (
	"context"
	"time"

	"perch/engine/trainset"
)

// The seam to the engine's trainer: the app adapts engine.Train to these
// (app/gui_teach.go); tests drive a fake.

// Job is one training segment: a fresh run, or the rest of one resumed
// from a checkpoint.
type Job struct {
	// Train and Valid are the rows as the history holds them: they reach
	// the engine as rows, never through a dataset file; ReadMedia gives
	// their attachments' bytes by hash.
	Train, Valid []trainset.Example
	ReadMedia    func(kind, name string) ([]byte, error)
	Data         string // a dataset folder instead (train.jsonl, valid.jsonl): runs started before rows went straight through
	Method       string // "sft", "dpo", "orpo"
	Iters        int
	BatchSize    int
	MaxLen       int
	Rank         int
	LR           float64 // of the A matrices
	LoRAPlus     float64 // B's rate over A's
	Beta         float64
	Lambda       float64
	ValEvery     int
	SaveEvery    int
	AdapterDir   string // adapter, checkpoints/, metrics files
	Resume       string // adapter folder to start from ("" fresh)
	Continue     string // checkpoint (with its resume state) whose run this continues exactly
	Seed         uint64
}

// EventKind tells which fields of an Event are set.
type EventKind int

const (
	EvStarted    EventKind = iota
	EvStep                 // Step, Loss, Margin, Tokens, TokensPerSec, ETA
	EvValidation           // Step, ValLoss
	EvCheckpoint           // Step, Path: saved and complete; ValLoss (NaN: not validated); Best…
	EvYield                // a chat is being served between steps
	EvPaused               // the run holds after a step (Pause)
	EvNotice               // Text
	EvDone                 // Steps, Adapter, Cancelled; Best…
	EvError                // Err
)

// Event is one report of a segment; steps count from 1 in each segment.
type Event struct {
	Kind         EventKind
	Step         int
	Loss         float64
	ValLoss      float64
	Margin       float64 // DPO reward margin, ORPO log-odds ratio
	MarginLabel  string  // what Margin is, as the method declares it
	Tokens       int
	TokensPerSec float64
	ETA          time.Duration
	Path         string
	Text         string
	Adapter      string // EvDone: the final adapter folder
	Cancelled    bool
	// EvCheckpoint, EvDone: the saved state with the lowest validation
	// loss so far, as the engine's run keeps it (the one rule: Teach
	// never compares losses itself). Best is its folder ("" and BestLoss
	// NaN while nothing saved was validated; the final adapter's folder
	// when that is the best at the end); BestStep counts from the
	// segment's start as Step does.
	Best     string
	BestStep int
	BestLoss float64
	Err      error
}

// Training is a segment going on: its events end with EvDone or EvError.
type Training interface {
	Events() <-chan Event
	Pause()
	Resume()
}

// Trainer starts training on base (a catalog id or folder), loading it
// as chats do; cancelling ctx stops at a step boundary and saves the
// adapter as it is.
type Trainer interface {
	Train(ctx context.Context, base string, job Job) (Training, error)
}
