package grammar

import (
	"fmt"
	"time"
)

// MaxTools bounds the tools one grammar may call.
const MaxTools = 128

// Tool is a function the model may call; Parameters is its JSON Schema
// (nil: any object).
type Tool struct {
	Name       string
	Parameters []byte
}

// Specials are the Gemma-4 token ids the call syntax is made of.
type Specials struct {
	ToolCall    int32 // <|tool_call>
	ToolCallEnd int32 // <tool_call|>
	Quote       int32 // <|"|>
}

type callSet struct {
	starts   [][]byte // per tool: <|tool_call> "call:NAME" (the '{' is the arguments')
	args     []*node
	end      []byte
	parallel bool
	text     bool           // free text may come first (tool_choice auto)
	barred   map[int32]bool // special tokens free text may not hold
}

// Phases of the calls frame besides pOpen (no call yet) and pValue (after one).
const (
	pText    uint8 = 10 // free text before any call
	pSpecial uint8 = 11 // reading a special token's id inside free text
)

// CompileTools compiles calls in Gemma-4's syntax,
// <|tool_call>call:NAME{key:value,…}<tool_call|>, one or more of them (one
// when !parallel), whose arguments satisfy each tool's parameters. The
// caller stops at <|tool_response>.
func CompileTools(tools []Tool, sp Specials, parallel bool) (*Grammar, error) {
	return compileTools(tools, sp, parallel, nil)
}

// CompileToolsOrText is CompileTools after optional free text (tool_choice
// auto with strict tools): the answer may be text and end, or go on into
// calls; the text may hold no special token of the call syntax (barred).
func CompileToolsOrText(tools []Tool, sp Specials, parallel bool, barred []int32) (*Grammar, error) {
	set := map[int32]bool{sp.ToolCall: true, sp.ToolCallEnd: true, sp.Quote: true}
	for _, id := range barred {
		set[id] = true
	}
	return compileTools(tools, sp, parallel, set)
}

func compileTools(tools []Tool, sp Specials, parallel bool, barred map[int32]bool) (*Grammar, error) {
	start := time.Now()
	if len(tools) == 0 {
		return nil, &CompileError{Msg: "no tools to call"}
	}
	if len(tools) > MaxTools {
		return nil, &CompileError{Msg: fmt.Sprintf("%d tools, over the limit of %d", len(tools), MaxTools)}
	}
	total := 0
	for _, t := range tools {
		total += len(t.Parameters)
	}
	if total > MaxSchemaBytes {
		return nil, &CompileError{Msg: fmt.Sprintf("tool schemas are %d bytes together, over the %d-byte limit", total, MaxSchemaBytes)}
	}
	g := &Grammar{tool: true, quote: specialBytes(sp.Quote), null: []byte("None")}
	cs := &callSet{end: specialBytes(sp.ToolCallEnd), parallel: parallel, text: barred != nil, barred: barred}
	var all []*node
	for _, t := range tools {
		if t.Name == "" {
			return nil, &CompileError{Msg: "a tool has no name"}
		}
		params := t.Parameters
		if len(params) == 0 {
			params = []byte(`{"type":"object"}`)
		}
		root, nodes, err := compileSchema(params)
		if err != nil {
			if ce, ok := err.(*CompileError); ok {
				ce.Msg = "tool " + t.Name + ": " + ce.Msg
			}
			return nil, err
		}
		obj := *root // the arguments are an object
		obj.types &= tObj
		nodes = append(nodes, &obj)
		all = append(all, nodes...)
		cs.starts = append(cs.starts, append(specialBytes(sp.ToolCall), "call:"+t.Name...))
		cs.args = append(cs.args, &obj)
	}
	g.calls = cs
	g.root = anythingShared
	if err := g.finish(anythingShared, all); err != nil {
		return nil, err
	}
	usable := false
	for i, a := range cs.args {
		if a.productive {
			usable = true
		} else {
			cs.starts[i] = nil
		}
	}
	if !usable {
		return nil, &CompileError{Msg: "no tool's parameters can be satisfied by an object"}
	}
	g.CompileTime = time.Since(start)
	return g, nil
}

// stepCalls reads the calls: each starts with its special token.
func (m *matcher) stepCalls(s *stack, f frame, c byte, out []*stack) []*stack {
	cs := m.g.calls
	switch f.phase {
	case pText:
		if c != 0xFF {
			return append(out, m.push(f, s.up))
		}
		out = append(out, m.push(frame{k: fCalls, phase: pSpecial}, s.up))
	case pSpecial:
		f.cnt = f.cnt<<8 | int32(c)
		if f.i++; f.i < 3 {
			return append(out, m.push(f, s.up))
		}
		if cs.barred[f.cnt] {
			return out
		}
		return append(out, m.push(frame{k: fCalls, phase: pText}, s.up))
	case pValue:
		if !cs.parallel {
			return out
		}
	}
	next := frame{k: fCalls, phase: pValue, cnt: f.cnt + 1}
	for i, start := range cs.starts {
		if start == nil || start[0] != c {
			continue
		}
		top := m.push(next, s.up)
		top = m.push(frame{k: fBytes, bs: cs.end}, top)
		top = m.push(frame{k: fValue, n: cs.args[i]}, top)
		out = append(out, m.push(frame{k: fBytes, bs: start, i: 1}, top))
	}
	return out
}
