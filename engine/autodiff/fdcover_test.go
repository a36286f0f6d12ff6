package autodiff_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestEveryGradientHasFD: every Tape method that records a gradient (its
// body calls t.record, t.binary or t.unary) has a finite-difference case
// named after it in fdCases, so a new op cannot land without one.
func TestEveryGradientHasFD(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if ok && fn.Recv != nil && fn.Body != nil && ast.IsExported(fn.Name.Name) && onTape(fn) && recordsGradient(fn.Body) {
				ops = append(ops, fn.Name.Name)
			}
		}
	}
	if len(ops) < 30 {
		t.Fatalf("found only %d recording ops (%v): the scan is broken", len(ops), ops)
	}
	covered := map[string]bool{}
	for _, c := range fdCases() {
		covered[strings.Fields(c.name)[0]] = true
	}
	slices.Sort(ops)
	for _, op := range ops {
		if !covered[op] {
			t.Errorf("Tape.%s records a gradient but has no finite-difference case", op)
		}
	}
	t.Logf("%d ops with a gradient: %s", len(ops), strings.Join(ops, " "))
}

func onTape(fn *ast.FuncDecl) bool {
	star, ok := fn.Recv.List[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	id, ok := star.X.(*ast.Ident)
	return ok && id.Name == "Tape"
}

func recordsGradient(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok {
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == "t" && slices.Contains([]string{"record", "binary", "unary"}, sel.Sel.Name) {
					found = true
				}
			}
		}
		return !found
	})
	return found
}
