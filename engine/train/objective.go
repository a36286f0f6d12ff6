package train

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// An Objective is a training method's loss as a value: the rows it reads,
// whether it needs the reference model, its loss with the coefficients the
// backward pass needs, and the metrics it reports with their labels. A
// method is one file that registers one (see sft.go); the engine, the
// metrics stream, the command line and the app read what it declares.
//
// Every loss is a function of per-sequence sums of target-token
// log-probabilities, f = Σ_{j∈[a,e)} log softmax(logits[j])[ids[j+1]], so
// the backward needs per sequence ∂loss/∂f (a number) times ∂f/∂hN.
type Objective interface {
	// Rows is the row shape the method trains on.
	Rows() RowKind
	// Reference reports that Loss needs the reference sums (adapter off).
	Reference() bool
	// Params are the method's settings with their defaults.
	Params() []Param
	// Metrics are what Loss reports, in order, with their labels.
	Metrics() []Metric
	// Loss is one group's share of the batch loss and ∂loss/∂f of each of
	// its sequences; it adds the group's share of each metric to m (the
	// order of Metrics).
	Loss(g Group, m []float64) (loss float64, coeffs []float64)
}

// A BatchObjective has a batch-level term (KTO's reference point): before
// any group's loss, the policy and reference sums of the sequences Extra
// makes from the batch's rows are given to Batch, whose value (a constant:
// no gradient flows through it) reaches every group as Group.Batch.
type BatchObjective interface {
	Objective
	Extra(rows []Row) []ExtraSeq
	Batch(policy, ref []float64, o Options) float64
}

// ExtraSeq is a sequence of a batch-level term: ids whose targets are the
// positions from Start (the first target token) on; Row is the batch row
// whose prompt (and media) it uses.
type ExtraSeq struct {
	IDs        []int32
	Start, Row int
}

// RowKind is the shape of a method's rows.
type RowKind int

const (
	RowsSFT      RowKind = iota // {"messages"}, {"prompt", "completion"}, {"text"}, {"input_ids"}: Row.IDs
	RowsPairs                   // {"prompt", "chosen", "rejected"}: Row.Prompt, Chosen, Rejected
	RowsUnpaired                // {"prompt", "completion", "label"}: Row.Prompt, Chosen (the completion), Label
)

// Param is one setting of a method: Options.Params[Name], else Default.
type Param struct {
	Name    string
	Default float64
	Help    string
}

// Metric is one number a method reports per step: Key in the metrics
// stream, Label for people. Chart marks the one the app draws beside the
// loss.
type Metric struct {
	Key, Label string
	Chart      bool
}

// Group is what Loss sees of one group (a row, or a pair).
type Group struct {
	Sums    []float64 // f of each sequence under the policy
	Refs    []float64 // f under the reference (Reference only)
	Tokens  []int     // counted target tokens of each sequence
	Label   bool      // unpaired rows: the completion is desirable
	Groups  int       // groups in the batch
	Counted int       // counted target tokens in the batch
	Batch   float64   // the batch-level term (BatchObjective)
	Opts    Options
}

// Param is the method's setting name: Options.Params, else the legacy
// fields (Beta, Lambda), else def.
func (o Options) Param(name string, def float64) float64 {
	if v, ok := o.Params[name]; ok {
		return v
	}
	switch {
	case name == "beta" && o.Beta != 0:
		return o.Beta
	case name == "lambda" && o.Lambda != 0:
		return o.Lambda
	}
	return def
}

var objectives = map[Method]Objective{}

// register adds a method; each method's file calls it from init.
func register(m Method, o Objective) { objectives[m] = o }

// ObjectiveOf is a method's objective.
func ObjectiveOf(m Method) (Objective, error) {
	if o, ok := objectives[m]; ok {
		return o, nil
	}
	return nil, fmt.Errorf("unknown training method %q: use %s", m, strings.Join(MethodNames(), ", "))
}

// MethodNames are the registered methods, sorted.
func MethodNames() []string {
	var out []string
	for m := range objectives {
		out = append(out, string(m))
	}
	sort.Strings(out)
	return out
}

// ParseMethod checks a method name.
func ParseMethod(s string) (Method, error) {
	if _, err := ObjectiveOf(Method(s)); err != nil {
		return "", err
	}
	return Method(s), nil
}

// Rows is the row shape m trains on (RowsSFT for an unknown method).
func (m Method) Rows() RowKind {
	if o, ok := objectives[m]; ok {
		return o.Rows()
	}
	return RowsSFT
}

// Preference reports whether m trains on chosen/rejected pairs.
func (m Method) Preference() bool { return m.Rows() == RowsPairs }

// Term is one reported metric's value.
type Term struct {
	Key, Label string
	Chart      bool
	Value      float64
}

// Term is the value of the metric key (NaN when the method has none).
func (s StepMetrics) Term(key string) float64 {
	for _, t := range s.Terms {
		if t.Key == key {
			return t.Value
		}
	}
	return math.NaN()
}

// Chart is the metric the app draws beside the loss (NaN when none).
func (s StepMetrics) Chart() (label string, v float64) {
	for _, t := range s.Terms {
		if t.Chart {
			return t.Label, t.Value
		}
	}
	return "", math.NaN()
}

func terms(ms []Metric, vals []float64) []Term {
	out := make([]Term, len(ms))
	for i, m := range ms {
		out[i] = Term{Key: m.Key, Label: m.Label, Chart: m.Chart, Value: vals[i]}
	}
	return out
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// softplus is log(1 + e^x) = −log σ(−x), computed without overflow.
func softplus(x float64) float64 {
	if x > 0 {
		return x + math.Log1p(math.Exp(-x))
	}
	return math.Log1p(math.Exp(x))
}
