package chattemplate

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"perch/engine/chattemplate/jinja"
)

// Hostile templates must stop with an error, in bounded time and memory,
// without crashing the process. Each case runs with the default limits
// unless it says otherwise; the log shows what each one cost.
func TestHostileTemplates(t *testing.T) {
	cases := []struct {
		name, src string
		lim       jinja.Limits
		want      error // nil: any error will do
	}{
		{"nested loops forever", `{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}`, jinja.Limits{}, jinja.ErrLimit},
		{"range of a billion", `{% for i in range(1000000000) %}x{% endfor %}`, jinja.Limits{}, jinja.ErrLimit},
		{"string doubling", `{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}`, jinja.Limits{}, jinja.ErrLimit},
		{"string repeat", `{{ 'A' * 8000000000000 }}`, jinja.Limits{}, jinja.ErrLimit},
		{"list repeat", `{{ [1, 2, 3] * 1000000000 }}`, jinja.Limits{}, jinja.ErrLimit},
		{"output flood", `{% for i in range(1000000) %}{{ 'x' * 1000 }}{% endfor %}`, jinja.Limits{}, jinja.ErrLimit},
		{"self-recursive macro", `{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}`, jinja.Limits{}, jinja.ErrLimit},
		{"mutual recursion", `{% macro a() %}{{ b() }}{% endmacro %}{% macro b() %}{{ a() }}{% endmacro %}{{ a() }}`, jinja.Limits{}, jinja.ErrLimit},
		{"recursion through caller", `{% macro w() %}{% call w() %}x{% endcall %}{% endmacro %}{{ w() }}`, jinja.Limits{}, jinja.ErrLimit},
		{"exponential sharing printed", `{% set ns = namespace(l=['x']) %}{% for i in range(60) %}{% set ns.l = [ns.l, ns.l] %}{% endfor %}{{ ns.l }}`, jinja.Limits{}, jinja.ErrLimit},
		{"exponential sharing tojson", `{% set ns = namespace(l=['x']) %}{% for i in range(60) %}{% set ns.l = [ns.l, ns.l] %}{% endfor %}{{ ns.l | tojson }}`, jinja.Limits{}, jinja.ErrLimit},
		{"deep nesting printed", `{% set ns = namespace(l=[]) %}{% for i in range(100000) %}{% set ns.l = [ns.l] %}{% endfor %}{{ ns.l | tojson }}`, jinja.Limits{}, nil},
		{"join explosion", `{% set ns = namespace(l=['abcdefgh']) %}{% for i in range(40) %}{% set ns.l = ns.l + ns.l %}{% endfor %}{{ ns.l | join }}`, jinja.Limits{}, jinja.ErrLimit},
		{"replace explosion", `{% set ns = namespace(s='a') %}{% for i in range(40) %}{% set ns.s = ns.s.replace('a', 'aa') %}{% endfor %}`, jinja.Limits{}, jinja.ErrLimit},
		{"huge power", `{{ 2 ** 100000000 }}`, jinja.Limits{}, nil},
		{"raise", `{{ raise_exception('no system role allowed') }}`, jinja.Limits{}, nil},
		{"tight steps", `{% for i in range(2000) %}{% endfor %}`, jinja.Limits{Steps: 1000}, jinja.ErrLimit},
		{"tight output", `{{ 'x' * 2000 }}`, jinja.Limits{Output: 1000}, jinja.ErrLimit},
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			tmpl, err := New(c.src)
			if err != nil {
				t.Fatal(err)
			}
			tmpl.Limits = c.lim
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			out, err := tmpl.Render(context.Background(), Input{})
			elapsed := time.Since(start)
			runtime.ReadMemStats(&after)
			allocated := after.TotalAlloc - before.TotalAlloc
			if err == nil {
				t.Fatalf("rendered %d bytes without error", len(out))
			}
			if c.want != nil && !errors.Is(err, c.want) {
				t.Fatalf("error %v, want one wrapping %v", err, c.want)
			}
			if allocated > 2<<30 {
				t.Fatalf("allocated %d MiB", allocated>>20)
			}
			t.Logf("stopped after %v, %d MiB allocated: %v", elapsed.Round(time.Millisecond), allocated>>20, err)
		})
	}
}

func TestRaisedErrorIsTyped(t *testing.T) {
	tmpl, err := New(`{{ raise_exception('roles must alternate') }}`)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tmpl.Render(context.Background(), Input{})
	var raised *jinja.RaisedError
	if !errors.As(err, &raised) || raised.Message != "roles must alternate" {
		t.Fatalf("got %v", err)
	}
}

func TestHostileParse(t *testing.T) {
	for name, src := range map[string]string{
		"deep parens": strings.Repeat("{{ ", 1) + strings.Repeat("(", 100000) + "1" + strings.Repeat(")", 100000) + " }}",
		"deep ifs":    strings.Repeat("{% if true %}", 100000) + strings.Repeat("{% endif %}", 100000),
		"deep lists":  "{{ " + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + " }}",
		"deep unary":  "{{ " + strings.Repeat("-", 100000) + "1 }}",
		"deep not":    "{{ " + strings.Repeat("not ", 100000) + "1 }}",
		"unclosed":    "{{ 'abc",
		"lone brace":  "{{ } }}",
		"bad escape":  `{{ '\x' }}`,
		"huge number": "{{ 99999999999999999999999 }}",
	} {
		if _, err := New(src); err == nil {
			t.Errorf("%s: parsed", name)
		} else {
			t.Logf("%-11s → %.120s", name, err)
		}
	}
}

func TestRenderCancelled(t *testing.T) {
	tmpl, err := New(`{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}`)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err = tmpl.Render(ctx, Input{})
	if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, jinja.ErrLimit) {
		t.Fatalf("got %v", err)
	}
}
