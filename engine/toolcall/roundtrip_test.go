package toolcall

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"perch/engine/chattemplate"
)

// hostile are the pieces argument strings are built from: everything a
// parser that does not track the <|"|> string state trips on.
var hostile = []string{
	`"`, `'`, "`", `\`, `\\`, `\n`, `\"`, "{", "}", "[", "]", ",", ":", "\n", "\r\n", "\t", " ",
	"<", ">", "<|", "|>", "<|tool_call>", "<tool_call|>", "<|tool_response>", "<turn|>", "<|channel>",
	"call:", "call:x{a:1}", "}<tool_call|>", "None", "null", "true", "False", "123", "-0", "1e5",
	"é", "日本語", "🙂", "\u00a0", "\u2028", "\x00", "\x7f", "ü\u0308", "<|\"", "\"|>",
	"```go\nfunc main() {}\n```", `C:\path\to\file`, `{"json": [1, 2]}`, "a,b:c}d]e", "word",
}

// keyPieces build keys: anything but ':' (a bare key ends at the first ':'),
// the structural characters and surrounding space.
var keyPieces = []string{"a", "key", "_", "-", ".", "$", "@", "x1", "é", "名前", "`", "'", `"`, `\`, "<", "camelCase", "snake_case", " mid "}

// gen makes random argument objects, seeded.
type gen struct{ r *rand.Rand }

func (g gen) str() string {
	var b strings.Builder
	for n := g.r.IntN(6); n > 0; n-- {
		if g.r.IntN(3) == 0 {
			b.WriteString(string(rune(0x20 + g.r.IntN(0x3000))))
		} else {
			b.WriteString(hostile[g.r.IntN(len(hostile))])
		}
	}
	// The delimiter itself is the one thing a string cannot hold: the
	// template writes strings unescaped.
	return strings.ReplaceAll(strings.ToValidUTF8(b.String(), ""), Quote, "<|'|>")
}

func (g gen) key() string {
	var b strings.Builder
	for n := 1 + g.r.IntN(3); n > 0; n-- {
		b.WriteString(keyPieces[g.r.IntN(len(keyPieces))])
	}
	return strings.ReplaceAll(strings.TrimSpace(b.String()), Quote, "") + "k"
}

// number returns JSON number text of every form the template prints.
func (g gen) number() string {
	switch g.r.IntN(10) {
	case 0:
		return strconv.Itoa(g.r.IntN(100) - 50)
	case 1:
		return strconv.FormatInt(g.r.Int64()-math.MaxInt64/2, 10)
	case 2:
		return []string{"0", "-0", "9223372036854775807", "-9223372036854775808", "0.0", "-0.0"}[g.r.IntN(6)]
	case 3: // beyond 64 bits: the template sees a float
		return "123456789012345678901234567890"
	case 4:
		return strconv.FormatFloat(g.r.Float64()*1000-500, 'f', -1, 64)
	case 5:
		return []string{"1e20", "1E-5", "3e-05", "1.5e300", "5e-324", "1.7976931348623157e308", "2.5E+10"}[g.r.IntN(7)]
	case 6:
		return strconv.FormatFloat(float64(g.r.IntN(1000)), 'f', 1, 64) // 12.0
	case 7:
		return strconv.FormatFloat(math.Float64frombits(g.r.Uint64()&^(0x7ff<<52)|uint64(g.r.IntN(0x7fe))<<52), 'g', -1, 64)
	case 8:
		return strconv.FormatFloat(g.r.NormFloat64()*1e-8, 'e', -1, 64)
	default:
		return strconv.FormatFloat(g.r.Float64(), 'g', -1, 64)
	}
}

func (g gen) value(depth int) any {
	k := g.r.IntN(10)
	if depth > 3 && k >= 7 {
		k = 0
	}
	switch k {
	case 0, 1, 2:
		return g.str()
	case 3, 4:
		return json.Number(g.number())
	case 5:
		return g.r.IntN(2) == 0
	case 6:
		return nil
	case 7, 8:
		return g.object(depth + 1)
	default:
		list := []any{}
		for n := g.r.IntN(4); n > 0; n-- {
			list = append(list, g.value(depth+1))
		}
		return list
	}
}

// object is a JSON object as ordered text (Go maps would lose nothing here,
// but json.Number keeps each number's text).
func (g gen) object(depth int) map[string]any {
	obj := map[string]any{}
	for n := g.r.IntN(5); n > 0; n-- {
		obj[g.key()] = g.value(depth)
	}
	return obj
}

func marshal(t testing.TB, v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSpace(b.Bytes())
}

// sameJSON compares two JSON texts as values; numbers are equal when they
// are the same int64, or else the same float64 (the template keeps a float
// as Python's repr, which is exact for float64; ints beyond 64 bits reach it
// as floats).
func sameJSON(a, b []byte) (bool, error) {
	var x, y any
	for _, p := range []struct {
		data []byte
		v    *any
	}{{a, &x}, {b, &y}} {
		dec := json.NewDecoder(bytes.NewReader(p.data))
		dec.UseNumber()
		if err := dec.Decode(p.v); err != nil {
			return false, fmt.Errorf("%s: %v", p.data, err)
		}
	}
	return equal(x, y), nil
}

func equal(x, y any) bool {
	switch a := x.(type) {
	case map[string]any:
		b, ok := y.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, v := range a {
			if w, ok := b[k]; !ok || !equal(v, w) {
				return false
			}
		}
		return true
	case []any:
		b, ok := y.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !equal(a[i], b[i]) {
				return false
			}
		}
		return true
	case json.Number:
		b, ok := y.(json.Number)
		if !ok {
			return false
		}
		if i, err := a.Int64(); err == nil {
			if j, err := b.Int64(); err == nil {
				return i == j
			}
		}
		f, err1 := a.Float64()
		g, err2 := b.Float64()
		return err1 == nil && err2 == nil && f == g
	default:
		return x == y
	}
}

// loadTemplate is the real Gemma-4 chat template, as the fixture
// checkpoints ship it.
func loadTemplate(t testing.TB) *chattemplate.Template {
	tmpl, err := chattemplate.Load(filepath.Join("..", "..", "testdata", "models", "text-tiny"))
	if err != nil {
		t.Fatal(err)
	}
	return tmpl
}

// renderCalls renders an assistant turn making these calls and returns the
// model's part of it (after its turn opener).
func renderCalls(t testing.TB, tmpl *chattemplate.Template, calls []chattemplate.ToolCall) string {
	out, err := tmpl.Render(context.Background(), chattemplate.Input{
		Messages: []chattemplate.Message{{Role: "user", Content: "go"}, {Role: "assistant", ToolCalls: calls}},
		Now:      time.Unix(0, 0),
	})
	if err != nil {
		t.Fatal(err)
	}
	i := strings.LastIndex(out, "<|turn>model\n")
	if i < 0 {
		t.Fatalf("no model turn in %q", out)
	}
	return out[i+len("<|turn>model\n"):]
}

// TestRoundTripThroughTemplate: parse(render(args)) == args for random
// argument objects rendered by the real template, fed to the parser in
// random pieces (as a stream would cut them).
func TestRoundTripThroughTemplate(t *testing.T) {
	tmpl := loadTemplate(t)
	g := gen{rand.New(rand.NewPCG(19, 2026))}
	const want = 10_000
	objects := 0
	for objects < want {
		var calls []chattemplate.ToolCall
		var args [][]byte
		for n := 1 + g.r.IntN(3); n > 0; n-- {
			a := marshal(t, g.object(0))
			args = append(args, a)
			calls = append(calls, chattemplate.ToolCall{ID: "c", Name: []string{"get_weather", "mcp.fs:read", "run-bash", "f"}[g.r.IntN(4)], Arguments: a})
		}
		text := renderCalls(t, tmpl, calls)
		var evs []Event
		p := &Parser{NewID: func() string { return "id" }}
		for rest := text; rest != ""; {
			n := min(len(rest), 1+g.r.IntN(12))
			evs = append(evs, p.Write(rest[:n])...)
			rest = rest[n:]
		}
		evs = append(evs, p.Close()...)
		var got []Call
		for _, ev := range evs {
			if ev.Kind != ToolCall {
				t.Fatalf("rendering %q: unexpected %v event %q", text, ev.Kind, ev.Text)
			}
			got = append(got, ev.Call)
		}
		if len(got) != len(calls) {
			t.Fatalf("rendering %q: %d calls parsed, want %d", text, len(got), len(calls))
		}
		for i, c := range got {
			if c.Err != nil {
				t.Fatalf("rendering %q: call %d: %v", text, i, c.Err)
			}
			same, err := sameJSON(args[i], c.Arguments)
			if err != nil || !same || c.Name != calls[i].Name {
				t.Fatalf("round trip lost the arguments (%v):\nwant %s %s\ngot  %s %s\nrendered %q", err, calls[i].Name, args[i], c.Name, c.Arguments, text)
			}
			objects++
		}
	}
	t.Logf("%d argument objects rendered by the real Gemma-4 template parsed back exactly", objects)
}
