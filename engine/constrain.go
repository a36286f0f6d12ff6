package engine

import (
	"fmt"
	"sync"

	"perch/engine/grammar"
	"perch/engine/tensor"
)

// SchemaError is a response schema or tool parameters the grammar cannot
// enforce (invalid, over a limit, or an unsupported feature named in the
// message); the API answers it with a 400.
type SchemaError = grammar.CompileError

// vocabulary is the tokenizer's trie for grammar masks, built once, on the
// first constrained request (on its caller's goroutine).
type vocabulary struct {
	once sync.Once
	v    *grammar.Vocab
}

// constrained reports whether the request's answer follows a grammar.
func constrained(req Request) bool {
	if len(req.ResponseSchema) > 0 {
		return true
	}
	if len(req.Tools) == 0 || req.ToolChoice.Mode == ToolNone {
		return false
	}
	if req.ToolChoice.Mode == ToolRequired || req.ToolChoice.Mode == ToolFunction {
		return true
	}
	for _, t := range req.Tools {
		if t.Strict {
			return true
		}
	}
	return false
}

// compileConstraint compiles the request's grammar, limits first; nil when
// the answer is free.
func (e *Engine) compileConstraint(req Request) (*grammar.Constraint, error) {
	if !constrained(req) {
		return nil, nil
	}
	var g *grammar.Grammar
	var err error
	var stops []int32
	if len(req.ResponseSchema) > 0 {
		g, err = grammar.Compile(req.ResponseSchema)
		for id := range e.stops {
			stops = append(stops, id)
		}
	} else {
		g, stops, err = e.compileTools(req)
	}
	if err != nil {
		return nil, err
	}
	e.vocab.once.Do(func() { e.vocab.v = grammar.NewVocab(e.tok) })
	return grammar.NewConstraint(g, e.vocab.v, stops), nil
}

// compileTools compiles the calls the request demands, in Gemma-4's syntax;
// the answer stops at <|tool_response>.
func (e *Engine) compileTools(req Request) (*grammar.Grammar, []int32, error) {
	if len(req.Tools) > grammar.MaxTools {
		return nil, nil, &SchemaError{Msg: fmt.Sprintf("%d tools, over the limit of %d", len(req.Tools), grammar.MaxTools)}
	}
	var sp grammar.Specials
	ids := map[string]*int32{"<|tool_call>": &sp.ToolCall, "<tool_call|>": &sp.ToolCallEnd, `<|"|>`: &sp.Quote}
	for text, dst := range ids {
		id, ok := e.tok.TokenID(text)
		if !ok {
			return nil, nil, fmt.Errorf("constrained tool calls: the tokenizer has no %s token", text)
		}
		*dst = id
	}
	resp, ok := e.tok.TokenID("<|tool_response>")
	if !ok {
		return nil, nil, fmt.Errorf("constrained tool calls: the tokenizer has no <|tool_response> token")
	}
	auto := req.ToolChoice.Mode == ToolAuto
	var tools []grammar.Tool
	for _, t := range req.Tools {
		if req.ToolChoice.Mode == ToolFunction && t.Name != req.ToolChoice.Name {
			continue
		}
		params := t.Parameters
		if auto && !t.Strict {
			params = nil // under auto only strict tools' arguments are constrained
		}
		tools = append(tools, grammar.Tool{Name: t.Name, Parameters: params})
	}
	if len(tools) == 0 {
		return nil, nil, &SchemaError{Msg: fmt.Sprintf("tool_choice names %q, which is not among the tools", req.ToolChoice.Name)}
	}
	parallel := req.ParallelToolCalls == nil || *req.ParallelToolCalls
	if auto { // text, or calls with strict arguments; the text may end the answer
		var barred []int32
		for _, text := range []string{"<|tool>", "<tool|>", "<tool_response|>"} {
			if id, ok := e.tok.TokenID(text); ok {
				barred = append(barred, id)
			}
		}
		stops := []int32{resp}
		for id := range e.stops {
			stops = append(stops, id)
		}
		g, err := grammar.CompileToolsOrText(tools, sp, parallel, barred)
		return g, stops, err
	}
	g, err := grammar.CompileTools(tools, sp, parallel)
	return g, []int32{resp}, err
}

// allowMask is the constraint's current mask as a bool [V] tensor.
func allowMask(b tensor.Backend, c *grammar.Constraint, buf []bool) tensor.Tensor {
	mask := c.Mask()
	for i := range buf {
		buf[i] = i>>6 < len(mask) && mask[i>>6]&(1<<(i&63)) != 0
	}
	return b.FromBool(buf, []int{len(buf)})
}
