package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"perch/app/engines"
	"perch/engine/grammar"
	"perch/engine/tokenizer"
)

func init() {
	Register("grammar", "check a JSON instance against a schema's token grammar (check)", func(args []string) int {
		return runGrammar(args, os.Stdin, os.Stdout, os.Stderr)
	})
}

// grammarCheck is perch grammar check's one line of output.
type grammarCheck struct {
	Compiled  bool      `json:"compiled"`
	Error     string    `json:"error"`
	Accepted  bool      `json:"accepted"`
	Tokens    int       `json:"tokens"`
	CompileUS float64   `json:"compile_us"`
	MaskUS    []float64 `json:"mask_us"`
}

// runGrammar is perch grammar check --model DIR --schema FILE: the JSON
// instance on stdin, tokenized as given (one trailing newline aside), is
// walked through the schema's grammar token by token; the verdict is one
// JSON line and the exit status 0 whatever it is.
func runGrammar(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "check" {
		fmt.Fprintln(stderr, "usage: perch grammar check --model DIR --schema FILE < instance.json")
		return 2
	}
	fs := flag.NewFlagSet("grammar check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	model := fs.String("model", "", "model folder, or any folder holding a tokenizer.json (only the tokenizer is read)")
	schemaPath := fs.String("schema", "", "JSON Schema file")
	words, err := ParseFlags(fs, args[1:])
	if err == flag.ErrHelp {
		return 0
	}
	if err == nil && (len(words) > 0 || *model == "" || *schemaPath == "") {
		err = errors.New("usage: perch grammar check --model DIR --schema FILE < instance.json")
	}
	var schema, instance []byte
	if err == nil {
		schema, err = os.ReadFile(*schemaPath)
	}
	if err == nil {
		instance, err = io.ReadAll(io.LimitReader(stdin, 16<<20))
	}
	var tok *tokenizer.Tokenizer
	if err == nil {
		dir := *model
		if _, statErr := os.Stat(filepath.Join(dir, "tokenizer.json")); statErr != nil {
			dir, err = engines.Resolve(*model)
		}
		if err == nil {
			tok, err = tokenizer.Load(dir)
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, "perch grammar check:", err)
		return 2
	}
	instance = bytes.TrimSuffix(bytes.TrimSuffix(instance, []byte("\n")), []byte("\r"))
	out, _ := json.Marshal(checkInstance(tok, schema, instance))
	fmt.Fprintln(stdout, string(out))
	return 0
}

func checkInstance(tok *tokenizer.Tokenizer, schema, instance []byte) grammarCheck {
	res := grammarCheck{MaskUS: []float64{}}
	start := time.Now()
	g, err := grammar.Compile(schema)
	res.CompileUS = micros(time.Since(start))
	if err != nil {
		res.Error = err.Error()
		return res
	}
	res.Compiled = true
	eos, ok := tok.EOS()
	if !ok {
		eos = -1
	}
	c := grammar.NewConstraint(g, grammar.NewVocab(tok), []int32{eos})
	ids := tok.Encode(string(instance), false)
	res.Tokens = len(ids)
	for i, id := range ids {
		t0 := time.Now()
		c.Mask()
		res.MaskUS = append(res.MaskUS, micros(time.Since(t0)))
		if !c.Allowed(id) {
			res.Error = fmt.Sprintf("token %d of %d (id %d, %q) is not allowed", i+1, len(ids), id, tok.IDToken(id))
			return res
		}
		if err := c.Advance(id); err != nil {
			res.Error = err.Error()
			return res
		}
	}
	if !c.CanEnd() {
		res.Error = "the instance ends before the value is complete"
		return res
	}
	res.Accepted = true
	return res
}

func micros(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
