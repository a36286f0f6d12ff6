package grammar

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os/exec"
	"slices"
	"sync"
	"testing"

	"perch/engine/tokenizer"
	"perch/engine/tokenizer/realvocab"
)

var (
	vocabOnce sync.Once
	gemmaTok  *tokenizer.Tokenizer
	gemmaVoc  *Vocab
)

// gemmaVocab is the real Gemma-4 vocabulary (skips without the cache).
func gemmaVocab(t testing.TB) (*tokenizer.Tokenizer, *Vocab) {
	dir := realvocab.Require(t, "../..", realvocab.Gemma4)
	vocabOnce.Do(func() {
		tok, err := tokenizer.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		gemmaTok, gemmaVoc = tok, NewVocab(tok)
	})
	if gemmaVoc == nil {
		t.Fatal("vocabulary did not load")
	}
	return gemmaTok, gemmaVoc
}

// sampleConstrained draws tokens uniformly among the allowed ones: a
// hostile "model" that explores every corner the mask leaves open.
func sampleConstrained(t *testing.T, g *Grammar, v *Vocab, rng *rand.Rand, maxTokens int) ([]byte, bool) {
	const stop = 1
	c := NewConstraint(g, v, []int32{stop})
	var out []byte
	for n := 0; n < maxTokens; n++ {
		if n%5 == 0 { // the slicer's shortcut gives the full walk's mask
			full := c.fullMask()
			if fast := c.Mask(); !slices.Equal(full, fast) {
				t.Fatalf("sliced mask differs from the full walk after %q", out)
			}
		}
		mask := c.Mask()
		var allowed []int32
		for w, bits := range mask {
			for bits != 0 {
				i := int32(w*64) + int32(trailingZeros(bits))
				allowed = append(allowed, i)
				bits &= bits - 1
			}
		}
		if len(allowed) == 0 {
			t.Fatalf("empty mask after %q", out)
		}
		id := allowed[rng.IntN(len(allowed))]
		// finish sooner: prefer the stop token, and closing tokens, some of the time
		if c.Allowed(stop) && rng.IntN(2) == 0 {
			id = stop
		} else if rng.IntN(3) == 0 {
			for _, cl := range closers(v) {
				if c.Allowed(cl) {
					id = cl
					break
				}
			}
		}
		if err := c.Advance(id); err != nil {
			t.Fatalf("mask allowed %d but Advance refused it: %v (after %q)", id, err, out)
		}
		if id == stop {
			return out, true
		}
		out = append(out, v.bytes[id]...)
	}
	return out, false
}

var closerIDs []int32

// closers are the tokens `"`, `]`, `}` and `0`.
func closers(v *Vocab) []int32 {
	if closerIDs == nil {
		for _, want := range []string{`"`, "]", "}", "0"} {
			for id, b := range v.bytes {
				if string(b) == want {
					closerIDs = append(closerIDs, int32(id))
					break
				}
			}
		}
	}
	return closerIDs
}

func trailingZeros(x uint64) int {
	n := 0
	for x&1 == 0 {
		x >>= 1
		n++
	}
	return n
}

// pythonValidate checks instances against schema with python3-jsonschema;
// it returns false when the validator is not installed.
func pythonValidate(t *testing.T, schema string, instances [][]byte) ([]bool, bool) {
	if _, err := exec.LookPath("python3"); err != nil {
		return nil, false
	}
	in, _ := json.Marshal(map[string]any{"schema": json.RawMessage(schema), "instances": toStrings(instances)})
	cmd := exec.Command("python3", "-c", `
import sys, json
try:
    import jsonschema
except ImportError:
    print("absent"); sys.exit(0)
d = json.load(sys.stdin)
v = jsonschema.validators.validator_for(d["schema"])(d["schema"], format_checker=jsonschema.FormatChecker())
print(json.dumps([v.is_valid(json.loads(s)) for s in d["instances"]]))
`)
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python validator: %v", err)
	}
	if string(bytes.TrimSpace(out)) == "absent" {
		return nil, false
	}
	var res []bool
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("python validator output %q: %v", out, err)
	}
	return res, true
}

func toStrings(b [][]byte) []string {
	s := make([]string, len(b))
	for i, x := range b {
		s[i] = string(x)
	}
	return s
}

var sampleSchemas = []string{
	`{"type":"object","properties":{"name":{"type":"string","maxLength":12},"age":{"type":"integer","minimum":0,"maximum":150},"tags":{"type":"array","items":{"enum":["a","b","c"]},"maxItems":3}},"required":["name","age"],"additionalProperties":false}`,
	`{"type":"object","properties":{"id":{"type":"string","pattern":"^[A-Z]{2}-\\d{3}$"},"when":{"type":"string","format":"date"},"score":{"type":"number","exclusiveMinimum":0,"maximum":1}},"required":["id","when","score"],"additionalProperties":false}`,
	`{"type":"object","properties":{"on":{"type":"boolean"},"n":{"type":"integer"}},"required":["n"],"maxProperties":3}`,
	`{"anyOf":[{"type":"boolean"},{"type":"array","items":{"type":["integer","null"]},"minItems":1,"maxItems":4}]}`,
	`{"$defs":{"t":{"type":"object","properties":{"v":{"type":"integer"},"kids":{"type":"array","items":{"$ref":"#/$defs/t"},"maxItems":2}},"required":["v"],"additionalProperties":false}},"$ref":"#/$defs/t"}`,
	`{"type":"string","minLength":3}`,
}

// TestSampledAnswersValidate: random walks through the masks over the real
// Gemma-4 vocabulary always end in instances a real validator accepts.
func TestSampledAnswersValidate(t *testing.T) {
	_, v := gemmaVocab(t)
	rng := rand.New(rand.NewPCG(7, 19))
	for _, schema := range sampleSchemas {
		g := mustCompile(t, schema)
		var got [][]byte
		for try := 0; len(got) < 12; try++ {
			if try == 200 {
				t.Fatalf("%s: only %d of 200 walks ended within 80 tokens", schema, len(got))
			}
			out, done := sampleConstrained(t, g, v, rng, 80)
			if !done {
				continue // too long for the budget; the prefix is not an answer
			}
			if !json.Valid(out) {
				t.Fatalf("%s: not JSON: %q", schema, out)
			}
			if !g.Validate(out) {
				t.Fatalf("%s: the grammar's own validator refuses %q", schema, out)
			}
			got = append(got, out)
		}
		res, ok := pythonValidate(t, schema, got)
		if !ok {
			t.Log("python3-jsonschema not installed: checked with json.Valid and the grammar only")
			continue
		}
		for i, valid := range res {
			if !valid {
				t.Errorf("%s: sampled %q does not validate", schema, got[i])
			}
		}
	}
}

// fullMask is Mask without the slicer: the whole trie walked.
func (c *Constraint) fullMask() []uint64 {
	clear(c.mask)
	c.m.scratch = true
	c.walk(&c.v.all, 0, c.states, 0)
	c.m.scratch = false
	c.m.resetArena()
	if c.CanEnd() {
		for _, id := range c.stops {
			c.mask[id>>6] |= 1 << (id & 63)
		}
	}
	return slices.Clone(c.mask)
}
