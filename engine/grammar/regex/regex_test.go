package regex

import (
	"strings"
	"testing"
)

// Patterns match with JSON Schema's search semantics (an unanchored side
// matches anything), CompileAnchored and Literals match whole strings.
func TestMatch(t *testing.T) {
	for _, c := range []struct {
		pattern  string
		anchored bool
		yes, no  []string
	}{
		{`^[a-z]+\d{2}$`, false, []string{"ab12", "z00"}, []string{"ab1", "1ab12", "ab123", ""}},
		{`\d`, false, []string{"a1b", "7"}, []string{"ab", ""}},
		{`^(?:ab|c)*$`, false, []string{"", "abcab", "ccc"}, []string{"a", "abb"}},
		{`^[^<>]{0,3}$`, false, []string{"", "é!", "abc"}, []string{"<", "abcd"}},
		{`^\u00e9\x41[\]-]?$`, false, []string{"éA", "éA]", "éA-"}, []string{"eA", "éA]]"}},
		{`^a{2,}$`, false, []string{"aa", "aaaa"}, []string{"a", "aab"}},
		{`^(?<year>\d{4})-\d\d$`, false, []string{"2024-01"}, []string{"24-01"}},
		{`[0-9a-f]{2}`, true, []string{"0f", "a9"}, []string{"0", "0f0", "0g"}},
		{`a|bc`, true, []string{"a", "bc"}, []string{"ab", "abc", "b"}},
	} {
		compile := Compile
		if c.anchored {
			compile = CompileAnchored
		}
		n, err := compile(c.pattern)
		if err != nil {
			t.Fatalf("%s: %v", c.pattern, err)
		}
		d := NewDFA(n)
		for _, s := range c.yes {
			if !d.Match(s) {
				t.Errorf("%s does not match %q", c.pattern, s)
			}
		}
		for _, s := range c.no {
			if d.Match(s) {
				t.Errorf("%s matches %q", c.pattern, s)
			}
		}
	}
	d := NewDFA(compiled(t)(Literals([]string{"red", "green", "", "gr"})))
	for s, want := range map[string]bool{"red": true, "green": true, "": true, "gr": true, "gre": false, "reds": false} {
		if d.Match(s) != want {
			t.Errorf("literals: %q matched %v", s, !want)
		}
	}
}

// What is not regular, anchors inside a pattern and oversized patterns are
// refused with an error, never compiled into something weaker.
func TestRefused(t *testing.T) {
	for _, p := range []string{`(?=a)b`, `(?!a)b`, `(a)\1`, `\bword`, `a^b`, `a$b`, `(a`, `a)`, `[a`, `a{3,2}`, strings.Repeat("a", 5000), "\xff"} {
		if _, err := Compile(p); err == nil {
			t.Errorf("%.20q compiled", p)
		}
	}
	if _, err := Compile(`(?:a{200}){200}`); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Errorf("a pattern expanding past the instruction limit: %v", err)
	}
}

// The DFA's range questions agree with stepping rune by rune.
func TestRanges(t *testing.T) {
	d := NewDFA(compiled(t)(Compile(`^(?:[a-m]x|[a-z]y)$`)))
	if !d.CanTake(Start, 'a', 'a') || d.CanTake(Start, '0', '9') {
		t.Error("CanTake from the start")
	}
	if to, same := d.Uniform(Start, 'n', 'z'); !same || to != d.Next(Start, 'q') {
		t.Errorf("n..z: %d %v", to, same)
	}
	if _, same := d.Uniform(Start, 'a', 'z'); same {
		t.Error("a..z splits at m/n but is uniform")
	}
	if to, same := d.Uniform(Start, '0', '9'); !same || to != Dead {
		t.Errorf("0..9: %d %v", to, same)
	}
	loop := NewDFA(compiled(t)(Compile(`^[a-c]*$`)))
	l := loop.Loop(Start)
	if l.ASCII[0] != 0 || l.ASCII[1] != 0b1110<<32 || l.Leads != 0 {
		t.Errorf("self loop of [a-c]*: %+v", l)
	}
}

// compiled returns a function that takes a compile's results and fails t
// on its error.
func compiled(t *testing.T) func(*NFA, error) *NFA {
	return func(n *NFA, err error) *NFA {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
}

// FuzzRegex: any pattern compiles or is refused; a compiled one matches
// any string without panicking.
func FuzzRegex(f *testing.F) {
	for _, s := range []string{`^[a-z]+\d{2,3}$`, `(a|b)*c?`, `[^\s"]{1,5}`, `\u00e9|\x41`, `(?:x)+$`, `a{2,}`, `[\]-]`} {
		f.Add(s, "abc12")
	}
	f.Fuzz(func(t *testing.T, pattern, s string) {
		n, err := Compile(pattern)
		if err != nil {
			return
		}
		NewDFA(n).Match(s)
	})
}
