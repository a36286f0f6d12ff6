package jinja

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// globals are the functions every template sees (Jinja2's defaults that
// chat templates use, and HF's raise_exception and strftime_now).
func globals() map[string]Value {
	return map[string]Value{
		"range":           &Func{Name: "range", Fn: gRange},
		"namespace":       &Func{Name: "namespace", Fn: gNamespace},
		"dict":            &Func{Name: "dict", Fn: gDict},
		"raise_exception": &Func{Name: "raise_exception", Fn: gRaise},
		"strftime_now":    &Func{Name: "strftime_now", Fn: gStrftime},
		"joiner":          &Func{Name: "joiner", Fn: gJoiner},
	}
}

func gRange(r *renderer, args []Value, kw *Dict) Value {
	var n [3]int64
	if len(args) == 0 || len(args) > 3 {
		r.fail("range expected 1 to 3 arguments, got %d", len(args))
	}
	for i, a := range args {
		x, ok := a.(int64)
		if !ok {
			if b, isBool := a.(bool); isBool && b {
				x, ok = 1, true
			} else if isBool {
				x, ok = 0, true
			}
		}
		if !ok {
			r.fail("range: '%s' object cannot be interpreted as an integer", typeName(a))
		}
		n[i] = x
	}
	start, stop, step := int64(0), n[0], int64(1)
	if len(args) >= 2 {
		start, stop = n[0], n[1]
	}
	if len(args) == 3 {
		step = n[2]
	}
	if step == 0 {
		r.fail("range() arg 3 must not be zero")
	}
	var count int64
	switch {
	case step > 0 && stop > start:
		count = (stop-start-1)/step + 1
	case step < 0 && start > stop:
		count = (start-stop-1)/(-step) + 1
	}
	if count > (r.lim.Alloc-r.alloc)/16 || count < 0 {
		r.limit("range of %d numbers", count)
	}
	r.charge(16 * count)
	items := make([]Value, count)
	for i := range items {
		items[i] = start + int64(i)*step
	}
	return &List{Items: items}
}

func gNamespace(r *renderer, args []Value, kw *Dict) Value {
	ns := &Namespace{attrs: NewDict()}
	for _, a := range args {
		if d, ok := a.(*Dict); ok {
			for i, k := range d.keys {
				ns.attrs.Set(k, d.vals[i])
			}
		}
	}
	if kw != nil {
		for i, k := range kw.keys {
			ns.attrs.Set(k, kw.vals[i])
		}
	}
	return ns
}

func gDict(r *renderer, args []Value, kw *Dict) Value {
	d := NewDict()
	for _, a := range args {
		if src, ok := a.(*Dict); ok {
			for i, k := range src.keys {
				d.Set(k, src.vals[i])
			}
		}
	}
	if kw != nil {
		for i, k := range kw.keys {
			d.Set(k, kw.vals[i])
		}
	}
	return d
}

func gRaise(r *renderer, args []Value, kw *Dict) Value {
	msg := "raise_exception called"
	if len(args) > 0 {
		msg = r.str(args[0])
	}
	panic(renderFail{&RaisedError{Message: msg}})
}

func gJoiner(r *renderer, args []Value, kw *Dict) Value {
	sep := r.str(arg(args, kw, 0, "sep", ", "))
	used := false
	return &Func{Name: "joiner", Fn: func(*renderer, []Value, *Dict) Value {
		if used {
			return sep
		}
		used = true
		return ""
	}}
}

func gStrftime(r *renderer, args []Value, kw *Dict) Value {
	return strftime(r.now, r.str(arg(args, kw, 0, "format", "")))
}

// strftime formats t with the C/Python directives templates use (%d %b %Y
// …), including glibc's %-d style that drops padding.
func strftime(t time.Time, format string) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 >= len(format) {
			b.WriteByte(c)
			continue
		}
		i++
		pad := true
		if format[i] == '-' && i+1 < len(format) {
			pad = false
			i++
		}
		num := func(v, width int) {
			if pad {
				fmt.Fprintf(&b, "%0*d", width, v)
			} else {
				b.WriteString(strconv.Itoa(v))
			}
		}
		switch format[i] {
		case 'Y':
			b.WriteString(strconv.Itoa(t.Year()))
		case 'y':
			num(t.Year()%100, 2)
		case 'm':
			num(int(t.Month()), 2)
		case 'd':
			num(t.Day(), 2)
		case 'e':
			fmt.Fprintf(&b, "%2d", t.Day())
		case 'H':
			num(t.Hour(), 2)
		case 'I':
			num((t.Hour()+11)%12+1, 2)
		case 'M':
			num(t.Minute(), 2)
		case 'S':
			num(t.Second(), 2)
		case 'j':
			num(t.YearDay(), 3)
		case 'p':
			if t.Hour() < 12 {
				b.WriteString("AM")
			} else {
				b.WriteString("PM")
			}
		case 'b', 'h':
			b.WriteString(t.Month().String()[:3])
		case 'B':
			b.WriteString(t.Month().String())
		case 'a':
			b.WriteString(t.Weekday().String()[:3])
		case 'A':
			b.WriteString(t.Weekday().String())
		case 'Z':
			name, _ := t.Zone()
			b.WriteString(name)
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('%')
			b.WriteByte(format[i])
		}
	}
	return b.String()
}
