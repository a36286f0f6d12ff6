package grammar

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkMaskBench runs MaskBench (guidance-ai/jsonschemabench,
// maskbench/data; never committed here): every schema is compiled (TTFM)
// and every test instance, written compactly with its keys in order, is
// tokenized with the Gemma-4 tokenizer and walked token by token, timing
// each mask (TBM, the final one where only EOS may follow included). A
// valid instance refused is a validation error, an invalid one accepted an
// invalidation error; a schema passes when it compiles and has neither.
// Single thread. PERCH_MASKBENCH=<maskbench/data folder>;
// PERCH_MASKBENCH_LIMIT=N takes the first N schemas of each split.
func BenchmarkMaskBench(b *testing.B) {
	dir := os.Getenv("PERCH_MASKBENCH")
	if dir == "" {
		b.Skip("PERCH_MASKBENCH not set: point it at a checkout's maskbench/data to run MaskBench")
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		b.Skipf("no MaskBench files in %s", dir)
	}
	tok, v := gemmaVocab(b)
	eos, _ := tok.EOS()
	limit, _ := strconv.Atoi(os.Getenv("PERCH_MASKBENCH_LIMIT"))
	sort.Strings(files)
	if maskBenchTotal != nil { // one pass over the data is the measurement
		reportMaskBench(b, maskBenchTotal)
		return
	}
	{
		splits := map[string]*benchSplit{}
		total := &benchSplit{}
		for _, f := range files {
			name := splitName(filepath.Base(f))
			sp := splits[name]
			if sp == nil {
				sp = &benchSplit{}
				splits[name] = sp
			}
			if limit > 0 && sp.schemas >= limit {
				continue
			}
			t0 := time.Now()
			runMaskBenchFile(b, f, tok, v, eos, sp, total)
			if d := time.Since(t0); d > 5*time.Second {
				b.Logf("slow: %s took %v", filepath.Base(f), d.Round(time.Millisecond))
			}
		}
		names := make([]string, 0, len(splits))
		for n := range splits {
			names = append(names, n)
		}
		sort.Strings(names)
		b.Logf("%-16s %7s %7s %7s %6s %6s %9s %9s %9s %9s %9s", "split", "schemas", "passing", "compile", "valid", "inval",
			"TBM p50", "TBM p99", "TBM mean", "TTFM p50", "TTFM p99")
		for _, n := range append(names, "total") {
			sp := total
			if n != "total" {
				sp = splits[n]
			}
			b.Logf("%-16s %7d %7d %7d %6d %6d %8.1fµs %8.1fµs %8.1fµs %8.1fµs %8.1fµs", n, sp.schemas, sp.passing, sp.compileErr,
				sp.validationErr, sp.invalidationErr, pct(sp.tbm, 50), pct(sp.tbm, 99), mean(sp.tbm), pct(sp.ttfm, 50), pct(sp.ttfm, 99))
		}
		maskBenchTotal = total
		reportMaskBench(b, total)
		if os.Getenv("PERCH_MASKBENCH_ERRORS") != "" {
			for _, e := range total.errors {
				b.Log(e)
			}
		}
	}
}

// maskBenchTotal keeps the first pass's totals for the harness's later calls.
var maskBenchTotal *benchSplit

func reportMaskBench(b *testing.B, total *benchSplit) {
	b.ReportMetric(float64(total.passing), "passing")
	b.ReportMetric(float64(total.compileErr), "compile-errors")
	b.ReportMetric(float64(total.invalidationErr), "invalidation-errors")
	b.ReportMetric(float64(total.validationErr), "validation-errors")
	b.ReportMetric(pct(total.tbm, 50), "TBM-p50-µs")
	b.ReportMetric(pct(total.tbm, 99), "TBM-p99-µs")
	b.ReportMetric(pct(total.ttfm, 50), "TTFM-p50-µs")
}

type benchSplit struct {
	schemas, passing, compileErr, validationErr, invalidationErr int
	tbm, ttfm                                                    []float64 // µs
	errors                                                       []string
}

type encoder interface {
	Encode(text string, addSpecial bool) []int32
}

func runMaskBenchFile(b *testing.B, path string, tok encoder, v *Vocab, eos int32, sp, total *benchSplit) {
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	var doc struct {
		Schema json.RawMessage `json:"schema"`
		Tests  []struct {
			Valid bool            `json:"valid"`
			Data  json.RawMessage `json:"data"`
		} `json:"tests"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		b.Fatalf("%s: %v", path, err)
	}
	for _, s := range []*benchSplit{sp, total} {
		s.schemas++
	}
	start := time.Now()
	g, err := Compile(doc.Schema)
	ttfm := float64(time.Since(start).Nanoseconds()) / 1e3
	if err != nil {
		for _, s := range []*benchSplit{sp, total} {
			s.compileErr++
		}
		total.errors = append(total.errors, fmt.Sprintf("%s: compile: %v", filepath.Base(path), err))
		return
	}
	for _, s := range []*benchSplit{sp, total} {
		s.ttfm = append(s.ttfm, ttfm)
	}
	ok := true
	for i, tc := range doc.Tests {
		inst, err := Canonical(tc.Data)
		if err != nil {
			continue
		}
		ids := tok.Encode(string(inst), false)
		c := NewConstraint(g, v, []int32{eos})
		accepted := true
		var times []float64
		deadline := time.Now().Add(20 * time.Second) // an instance past it counts as refused
		for _, id := range append(ids, eos) {
			if time.Now().After(deadline) {
				accepted = false
				total.errors = append(total.errors, fmt.Sprintf("%s: test %d: over 20 s, stopped", filepath.Base(path), i))
				break
			}
			t0 := time.Now()
			c.Mask()
			times = append(times, float64(time.Since(t0).Nanoseconds())/1e3)
			if !c.Allowed(id) || c.Advance(id) != nil {
				accepted = false
				break
			}
		}
		for _, s := range []*benchSplit{sp, total} {
			s.tbm = append(s.tbm, times...)
		}
		switch {
		case tc.Valid && !accepted:
			ok = false
			for _, s := range []*benchSplit{sp, total} {
				s.validationErr++
			}
			total.errors = append(total.errors, fmt.Sprintf("%s: test %d: valid instance refused: %.200s", filepath.Base(path), i, inst))
		case !tc.Valid && accepted:
			ok = false
			for _, s := range []*benchSplit{sp, total} {
				s.invalidationErr++
			}
			total.errors = append(total.errors, fmt.Sprintf("%s: test %d: INVALID instance accepted: %.200s", filepath.Base(path), i, inst))
		}
	}
	if ok {
		for _, s := range []*benchSplit{sp, total} {
			s.passing++
		}
	}
}

func pct(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p/100))]
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t / float64(len(xs))
}

// splitName is the data split a MaskBench file belongs to: the part before
// "---", or for BFCL files the name without its "_N.json" number.
func splitName(file string) string {
	if before, _, ok := strings.Cut(file, "---"); ok {
		return before
	}
	name := strings.TrimSuffix(file, ".json")
	if i := strings.LastIndexByte(name, '_'); i > 0 {
		if _, err := strconv.Atoi(name[i+1:]); err == nil {
			return name[:i]
		}
	}
	return name
}
