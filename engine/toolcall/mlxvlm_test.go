package toolcall

import (
	"strings"
	"testing"
)

// TestDifferencesFromMLXVLM logs, and checks our side of, where mlx-vlm's
// Gemma-4 parser (mlx_vlm/tool_parsers/gemma4.py) and ours differ. The
// mlx-vlm column is what its parse_tool_call returned for each body when
// run standalone (python3, outside this repository); in that cross-check,
// on 2,000 random argument objects rendered by the real template (seeded
// as in TestRoundTripThroughTemplate), it gave the arguments back for
// 1,268 (63.4 %): 604 lost a null (rendered None, kept as the string
// "None"), 116 a string holding a brace or bracket (its balanced-brace
// regex does not skip <|"|> strings), 12 a string holding the text
// <tool_call|> (its server cuts a call at the first end marker). Ours gave
// back all 2,000.
func TestDifferencesFromMLXVLM(t *testing.T) {
	q := Quote
	rows := []struct {
		what, body, mlxvlm, ours, why string
	}{
		{"null", "call:f{a:None}", `{"a": "None"}`, `{"a":null}`,
			"the template prints JSON null as Python's None; it is null, not a string"},
		{"brace in a string", "call:f{a:" + q + "x}y" + q + ",b:1}", `{"a": "x"}`, `{"a":"x}y","b":1}`,
			"a string ends only at <|\"|>; the regex ends the object at the '}' inside it and drops b"},
		{"<tool_call|> text in a string", "call:f{a:" + q + "<tool_call|>" + q + "}", "(call cut at the first <tool_call|>)", `{"a":"<tool_call|>"}`,
			"the stream is scanned with the string state, so the end marker inside a string is text"},
		{"Python booleans", "call:f{a:True}", `{"a": "True"}`, `{"a":true}`,
			"a model trained on the template writes true, but True means the same"},
		{"quoted key", "call:f{" + q + "a b" + q + ":1}", `{"<|\"|>a b<|\"|>": 1}`, `{"a b":1}`,
			"the delimiters are syntax (the template's escape_keys form), not part of the key"},
		{"JSON quotes holding a comma", `call:f{a:"x, y"}`, `{"a": "\"x"}`, `{"a":"x, y"}`,
			"a \"…\" string is read with JSON's rules up to its closing quote"},
		{"unclosed string", "call:f{a:" + q + "x}", `{"a": "x"}`, "error",
			"a call cut short is reported with its text, not completed by guessing"},
		{"entry without a colon", "call:f{a:1,b}", `{"a": 1}`, "error",
			"an argument is never dropped silently"},
		{"text after the arguments", "call:f{a:1}junk", `{"a": 1}`, "error",
			"the arguments must end the call; trailing text means the call is not what it seems"},
		{"no call: prefix", "get_weather{city:Austin}", `{"city": "Austin"}`, "error",
			"the template always writes call:NAME; mlx-vlm also accepts DiffusionGemma's bare form"},
		{"4 levels of nesting", "call:f{a:{b:{c:{d:1}}}}", `{"a": {"b": {"c": {"d": 1}}}}`, `{"a":{"b":{"c":{"d":1}}}}`,
			"same (its regex covers 3 levels, its fallback the rest)"},
		{"float forms", "call:f{a:1e+20,b:3e-05,c:-0.0}", `{"a": 1e+20, "b": 3e-05, "c": -0.0}`, `{"a":1e+20,"b":3e-05,"c":-0.0}`,
			"same: Python's float repr is JSON"},
	}
	var table strings.Builder
	table.WriteString("| case | mlx-vlm | ours | why |\n|---|---|---|---|\n")
	for _, r := range rows {
		_, args, err := ParseCall(r.body)
		got := string(args)
		if err != nil {
			got = "error"
		}
		if got != r.ours {
			t.Errorf("%s: %q gives %s (%v), want %s", r.what, r.body, got, err, r.ours)
		}
		table.WriteString("| " + r.what + " | " + r.mlxvlm + " | " + got + " | " + r.why + " |\n")
	}
	t.Logf("where mlx-vlm's Gemma-4 parser and ours differ:\n%s", table.String())
}
