package teach

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"perch/ui"
	"perch/ui/look"
)

// The Teach page's defaults and the checks it makes before asking the
// teacher for an estimate.

// methodPreset is one method in plain language, with its defaults.
type methodPreset struct {
	Method ui.TrainMethod
	Label  string
	Short  string // for a run's title: "learns from likes and dislikes (DPO)"
	Hint   string
	LR     float64 // of the A matrices; B learns at LR × ratio
}

// methodPresets are the choices the Teach page offers, in order. The
// rate is the width study's best plain-LoRA rate at E2B's width (1536)
// and at 1024: 3e-4 (1e-3 diverged there; 1e-3 was best at widths 64 and
// 256). Its DPO runs had the same best plain rate as SFT at every width,
// so every method starts there.
var methodPresets = []methodPreset{
	{ui.MethodDPO, "My likes and dislikes (DPO)", "learns from likes and dislikes (DPO)",
		"Each answer you disliked and a better version of it (one you liked, corrected or regenerated) make a pair; Perch learns to prefer the better one.", 3e-4},
	{ui.MethodSFT, "Examples (SFT)", "learns from examples (SFT)",
		"Perch learns to answer like the answers you liked or corrected, or like the examples in your files.", 3e-4},
	{ui.MethodORPO, "Both together (ORPO)", "learns from likes, dislikes and examples (ORPO)",
		"Learns from the same pairs as DPO and from the better answers as examples, in one pass.", 3e-4},
	{ui.MethodKTO, "Thumbs up and down (KTO)", "learns from thumbs up and down (KTO)",
		"Every answer you liked or disliked counts on its own: no correction or better version is needed.", 3e-4},
}

func presetFor(m ui.TrainMethod) methodPreset {
	for _, p := range methodPresets {
		if p.Method == m {
			return p
		}
	}
	return methodPresets[0]
}

// defaultPlan is what the form starts with.
func defaultPlan() ui.TrainPlan {
	return ui.TrainPlan{Name: "my-style", Source: ui.TeachSource{Feedback: true}, Method: ui.MethodDPO, Rank: 8, Steps: 100,
		LearningRate: presetFor(ui.MethodDPO).LR, LoRAPlusRatio: ui.DefaultLoRAPlusRatio, ValShare: 0.1,
		BatchSize: 1, MaxSeqLen: 2048, Beta: 0.1, Lambda: 0.1}
}

// suggestSteps is about three passes over the rows, between 20 and 1000.
func suggestSteps(rows, batch int) int {
	if batch < 1 {
		batch = 1
	}
	s := 3 * rows / batch
	s = (s + 9) / 10 * 10
	return min(max(s, 20), 1000)
}

var adapterName = regexp.MustCompile(`^[\p{L}\p{N}][\p{L}\p{N} ._-]{0,63}$`)

// checkAdapterName says what is wrong with an adapter's name.
func checkAdapterName(name string) error {
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		return errors.New("give the adapter a name, such as my-style")
	case strings.Contains(name, "+"):
		return errors.New("an adapter's name cannot contain \"+\" (the local API writes models as base+adapter)")
	case !adapterName.MatchString(name):
		return errors.New("an adapter's name is up to 64 letters, digits, spaces, dots, dashes or underscores")
	}
	return nil
}

// planFields are the form's text values.
type planFields struct {
	Name, Steps, Rank, LR, Ratio, ValShare, Batch, MaxLen, Beta, Lambda string
}

// parsePlan reads the form into a plan; the error lists every bad field.
func parsePlan(base string, src ui.TeachSource, m ui.TrainMethod, f planFields) (ui.TrainPlan, error) {
	p := ui.TrainPlan{Base: base, Name: strings.TrimSpace(f.Name), Source: src, Method: m}
	var bad []string
	num := func(s, what string, lo, hi float64, out *float64) {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < lo || v > hi {
			bad = append(bad, fmt.Sprintf("%s must be a number from %g to %g", what, lo, hi))
			return
		}
		*out = v
	}
	whole := func(s, what string, lo, hi int, out *int) {
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || v < lo || v > hi {
			bad = append(bad, fmt.Sprintf("%s must be a whole number from %d to %d", what, lo, hi))
			return
		}
		*out = v
	}
	if err := checkAdapterName(p.Name); err != nil {
		bad = append(bad, err.Error())
	}
	whole(f.Steps, "steps", 1, 100000, &p.Steps)
	whole(f.Rank, "rank", 1, 256, &p.Rank)
	whole(f.Batch, "batch size", 1, 64, &p.BatchSize)
	whole(f.MaxLen, "maximum length", 64, 131072, &p.MaxSeqLen)
	num(f.LR, "learning rate", 1e-9, 1, &p.LearningRate)
	num(f.Ratio, "the LoRA+ ratio", 1, 1024, &p.LoRAPlusRatio)
	var share float64
	num(strings.TrimSuffix(strings.TrimSpace(f.ValShare), "%"), "validation share", 0, 50, &share)
	p.ValShare = share / 100
	p.Beta, p.Lambda = 0.1, 0.1
	if m == ui.MethodDPO || m == ui.MethodKTO {
		num(f.Beta, "DPO beta", 0.001, 10, &p.Beta)
	}
	if m == ui.MethodORPO {
		num(f.Lambda, "ORPO lambda", 0.001, 10, &p.Lambda)
	}
	if base == "" {
		bad = append(bad, "choose a base model (download one in Models)")
	}
	if !src.Feedback && src.Folder == "" {
		bad = append(bad, "choose what to learn from: your feedback, a folder, or both")
	}
	if len(bad) > 0 {
		return p, errors.New(capitalize(strings.Join(bad, "; ")) + ".")
	}
	return p, nil
}

// nothingToLearn explains an empty dataset for method m, or returns "".
func nothingToLearn(d ui.DataSummary, m ui.TrainMethod, src ui.TeachSource) string {
	if d.Usable(m) > 0 {
		return ""
	}
	if m == ui.MethodSFT {
		msg := "Nothing to learn from yet: give answers you like a thumbs up, or correct an answer with the pencil"
		if src.Folder == "" {
			msg += ", or choose a folder of examples"
		}
		return msg + "."
	}
	msg := "Nothing to learn from yet: a pair needs an answer you disliked and a better version of it. Give an answer a thumbs down, then correct it or regenerate it and like the new one"
	if d.Unpaired > 0 {
		msg = fmt.Sprintf("Nothing to learn from yet: %d disliked %s no better version. Correct %s with the pencil, or regenerate and like the new one",
			d.Unpaired, plural(d.Unpaired, "answer has", "answers have"), plural(d.Unpaired, "it", "them"))
	}
	if m == ui.MethodKTO {
		msg = "Nothing to learn from yet: give answers a thumbs up or down"
	}
	if d.Rated > 0 && m != ui.MethodKTO {
		msg += fmt.Sprintf(", or switch to \"Thumbs up and down (KTO)\" (%d %s ready)", d.Rated, plural(d.Rated, "rated answer", "rated answers"))
	} else if d.Examples > 0 {
		msg += fmt.Sprintf(", or switch to \"Examples (SFT)\" (%d %s ready)", d.Examples, plural(d.Examples, "example", "examples"))
	}
	return msg + "."
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// dataLine is "12 examples · 5 pairs · 2 with photos".
func dataLine(d ui.DataSummary) string {
	parts := []string{fmt.Sprintf("%d %s", d.Examples, plural(d.Examples, "example", "examples")),
		fmt.Sprintf("%d %s", d.Pairs, plural(d.Pairs, "pair", "pairs"))}
	if d.Media > 0 {
		parts = append(parts, fmt.Sprintf("%d with media", d.Media))
	}
	if d.Unpaired > 0 {
		parts = append(parts, fmt.Sprintf("%d %s without a better version", d.Unpaired, plural(d.Unpaired, "dislike", "dislikes")))
	}
	return strings.Join(parts, " · ")
}

// EstimateLine is "About 12 min · needs 5.1 GB of the 18.0 GB this
// computer can give · 12 training and 2 validation rows", the memory as
// the Models page says it.
func EstimateLine(e ui.TrainEstimate) string {
	mem := look.MemoryLine(e.Memory, e.Available)
	if e.Tight {
		mem += " · " + look.FitWords(ui.FitsTight)
	}
	return fmt.Sprintf("%s · %s · %d training and %d validation rows", capitalize(duration(e.Duration)), mem, e.Rows, e.ValRows)
}

// duration is a rough, friendly length of time, one way everywhere:
// "under a minute", "about 4 min", "about 1.5 h".
func duration(d time.Duration) string {
	switch s := d.Seconds(); {
	case s < 60:
		return "under a minute"
	case s < 3600:
		return fmt.Sprintf("about %d min", int(math.Round(s/60)))
	default:
		return fmt.Sprintf("about %.1f h", s/3600)
	}
}
