package jinja

// Statements.
type node any

type (
	textNode   struct{ text string }
	outputNode struct {
		x    expr
		line int
	}
	ifNode struct {
		conds  []expr
		bodies [][]node
		els    []node
	}
	forNode struct {
		targets   []string // several: tuple unpacking
		iter      expr
		cond      expr // optional "if" filter
		body, els []node
		line      int
	}
	setNode struct {
		targets []string // several: tuple unpacking
		nsVar   string   // {% set ns.attr = … %}
		nsAttr  string
		x       expr
		line    int
	}
	setBlockNode struct {
		target  string
		filters []*filterExpr // applied to the captured text
		body    []node
	}
	macroNode struct {
		m *Macro
	}
	callBlockNode struct {
		call *callExpr
		m    *Macro // the caller() body
		line int
	}
	filterBlockNode struct {
		filters []*filterExpr
		body    []node
	}
	withNode struct {
		names []string
		vals  []expr
		body  []node
	}
	loopCtlNode struct {
		brk bool
	}
)

// Macro is a {% macro %} and, bound to a call block, its caller().
type Macro struct {
	name     string
	params   []string
	defaults []expr // nil for a required parameter
	body     []node
	caller   *Macro // set while a call block runs the macro
	scope    *scope // the scope a caller() body closes over
}

// Expressions.
type expr any

type (
	constExpr struct{ v Value }
	nameExpr  struct {
		name string
		line int
	}
	listExpr struct {
		items []expr
		tuple bool
	}
	dictExpr struct{ keys, vals []expr }
	attrExpr struct {
		x    expr
		name string
		line int
	}
	itemExpr struct {
		x, key expr
		line   int
	}
	sliceExpr struct {
		x                expr
		start, stop, stp expr // nil when absent
	}
	callExpr struct {
		fn   expr
		args []expr
		kw   []string
		kwv  []expr
		line int
	}
	filterExpr struct {
		x    expr // nil inside {% filter %} and {% set … | f %}
		name string
		args []expr
		kw   []string
		kwv  []expr
		line int
	}
	testExpr struct {
		x      expr
		name   string
		args   []expr
		negate bool
		line   int
	}
	unaryExpr struct {
		op string // "not", "-", "+"
		x  expr
	}
	binExpr struct {
		op   string // + - * / // % ** ~ and or
		l, r expr
		line int
	}
	compareExpr struct {
		first expr
		ops   []string // == != < <= > >= in notin
		rest  []expr
		line  int
	}
	condExpr struct {
		cond, yes, no expr // no may be nil
	}
)
