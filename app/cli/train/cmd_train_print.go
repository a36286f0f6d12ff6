package train

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"perch/engine/train"
)

// trainLine is one line of a run's metrics stream (train.Event.JSON), as
// the printer reads it: live from the engine or from a file (train watch).
type trainLine struct {
	Type       string   `json:"type"`
	Step       int      `json:"step"`
	Loss       *float64 `json:"loss"`
	GradNorm   *float64 `json:"grad_norm"`
	Tokens     int      `json:"tokens"`
	TokensPerS *float64 `json:"tokens_per_s"`
	ETA        float64  `json:"eta_s"`
	ValLoss    *float64 `json:"val_loss"`
	TestLoss   *float64 `json:"test_loss"`
	TestPPL    *float64 `json:"test_ppl"`
	ElapsedMS  float64  `json:"elapsed_ms"`
	Path       string   `json:"path"`
	Text       string   `json:"text"`
	Reason     string   `json:"reason"`
	Message    string   `json:"message"`
	// started
	Method      string `json:"method"`
	Iters       int    `json:"iters"`
	BatchSize   int    `json:"batch_size"`
	TrainRows   int    `json:"train_rows"`
	ValidRows   int    `json:"valid_rows"`
	Parameters  int    `json:"parameters"`
	AdapterPath string `json:"adapter_path"`
	// done
	Steps          int      `json:"steps"`
	Cancelled      bool     `json:"cancelled"`
	BestCheckpoint string   `json:"best_checkpoint"`
	BestValLoss    *float64 `json:"best_val_loss"`
	// every key, for the method's own metrics (train.Objective.Metrics)
	values map[string]any
}

func parseTrainLine(b []byte) (trainLine, error) {
	var l trainLine
	if err := json.Unmarshal(b, &l); err != nil {
		return l, err
	}
	return l, json.Unmarshal(b, &l.values)
}

// trainPrinter shows a run: a progress bar on a terminal, a line every
// few steps elsewhere, or (--json) the event lines themselves.
type trainPrinter struct {
	stdout, stderr io.Writer
	json, tty      bool
	iters          int
	every          int            // a step line every N steps without a terminal (0: 10)
	metrics        []train.Metric // the run's method's, from its started line
	open           bool           // a bar line is drawn and not yet ended
}

func newTrainPrinter(stdout, stderr io.Writer, jsonOut bool) *trainPrinter {
	return &trainPrinter{stdout: stdout, stderr: stderr, json: jsonOut, tty: isTerminal(stdout)}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// event prints a live event.
func (p *trainPrinter) event(ev train.Event, m train.Method) {
	if p.json {
		fmt.Fprintf(p.stdout, "%s\n", ev.JSON(m, true)) // the metrics stream's lines, learning rate and speed included
		return
	}
	l, _ := parseTrainLine(ev.JSON(m, true))
	p.line(l)
}

// fail reports an error that stopped the command; it returns the exit code.
func (p *trainPrinter) fail(err error) int {
	if p.json {
		b, _ := json.Marshal(map[string]any{"type": "error", "message": err.Error()})
		fmt.Fprintf(p.stdout, "%s\n", b)
	} else {
		p.endBar()
		fmt.Fprintln(p.stderr, "perch train:", err)
	}
	return 1
}

func (p *trainPrinter) endBar() {
	if p.open {
		fmt.Fprintln(p.stdout)
		p.open = false
	}
}

func (p *trainPrinter) say(format string, args ...any) {
	p.endBar()
	fmt.Fprintf(p.stdout, format+"\n", args...)
}

// line prints one stream line for a person.
func (p *trainPrinter) line(l trainLine) {
	switch l.Type {
	case "started":
		p.iters, p.metrics = l.Iters, nil
		if obj, err := train.ObjectiveOf(train.Method(l.Method)); err == nil {
			p.metrics = obj.Metrics()
		}
		p.say("training %s: %d steps of %d rows from %d rows (%d for validation), %d adapter parameters, into %s",
			l.Method, l.Iters, l.BatchSize, l.TrainRows, l.ValidRows, l.Parameters, l.AdapterPath)
	case "step":
		p.step(l)
	case "validation":
		p.say("step %d: validation loss %s (%.1f s)", l.Step, f4(l.ValLoss), l.ElapsedMS/1000)
	case "checkpoint":
		p.say("step %d: checkpoint %s", l.Step, l.Path)
	case "test":
		p.say("Test loss %s, Test ppl %s.", f4(l.TestLoss), f4(l.TestPPL))
	case "notice":
		p.say("note: %s", l.Text)
	case "paused":
		if p.tty {
			fmt.Fprintf(p.stdout, "\r\x1b[Kstep %d: paused (%s)", l.Step, l.Reason)
			p.open = true
		}
	case "done":
		what := "done"
		if l.Cancelled {
			what = "stopped"
		}
		s := fmt.Sprintf("%s after %d steps: adapter in %s", what, l.Steps, l.AdapterPath)
		if l.BestCheckpoint != "" && filepath.Clean(l.BestCheckpoint) == filepath.Clean(l.AdapterPath) {
			s += fmt.Sprintf(" (the best: validation loss %s)", f4(l.BestValLoss))
		} else if l.BestCheckpoint != "" {
			s += fmt.Sprintf(" (best checkpoint %s, validation loss %s)", l.BestCheckpoint, f4(l.BestValLoss))
		}
		p.say("%s", s)
	case "error":
		p.endBar()
		fmt.Fprintln(p.stderr, "perch train:", l.Message)
	}
}

func (p *trainPrinter) step(l trainLine) {
	extra := ""
	for _, m := range p.metrics {
		if v, ok := l.values[m.Key].(float64); ok && (m.Chart || !p.tty) {
			extra += fmt.Sprintf(" · %s %.4f", m.Label, v)
		}
	}
	rate := ""
	if l.TokensPerS != nil {
		rate = fmt.Sprintf(" · %.0f tok/s", *l.TokensPerS)
	}
	eta := (time.Duration(l.ETA) * time.Second).Round(time.Second)
	if p.tty {
		const width = 24
		done := width
		if p.iters > 0 {
			done = width * l.Step / p.iters
		}
		fmt.Fprintf(p.stdout, "\r\x1b[Kstep %d/%d [%s%s] loss %s%s%s · ETA %s", l.Step, p.iters,
			strings.Repeat("#", done), strings.Repeat("-", width-done), f4(l.Loss), extra, rate, eta)
		p.open = true
		return
	}
	every := p.every
	if every < 1 {
		every = 10
	}
	if l.Step == 1 || l.Step%every == 0 || l.Step == p.iters {
		p.say("step %d/%d: loss %s · grad norm %s · %d tokens%s%s · ETA %s", l.Step, p.iters, f4(l.Loss), f4(l.GradNorm), l.Tokens, extra, rate, eta)
	}
}

func f4(v *float64) string {
	if v == nil {
		return "NaN"
	}
	return fmt.Sprintf("%.4f", *v)
}
