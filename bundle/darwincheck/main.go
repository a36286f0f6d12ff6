// Command darwincheck type-checks the macOS build of Go packages on any OS.
// Linux cannot compile darwinkit (its cgo needs Apple's SDK), but it can load
// the darwin file set with cgo faked: go list picks the files for
// GOOS=darwin (cgo files included), std comes from gc export data built for
// darwin, everything else is parsed and checked from source with
// types.Config.FakeImportC. Nothing inside C.… is checked; it is a type
// check, not a build.
//
//	usage: go run ./bundle/darwincheck [packages]   (default ./...)
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

type pkg struct {
	ImportPath, Dir, Export string
	Standard, DepOnly       bool
	GoFiles, CgoFiles       []string
	ImportMap               map[string]string
	Error                   *struct{ Err string }
}

func goList(cgo string, args ...string) ([]*pkg, error) {
	cmd := exec.Command("go", append([]string{"list", "-e", "-json=ImportPath,Dir,Export,Standard,DepOnly,GoFiles,CgoFiles,ImportMap,Error"}, args...)...)
	cmd.Env = append(os.Environ(), "GOOS=darwin", "GOARCH=arm64", "CGO_ENABLED="+cgo)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []*pkg
	for dec := json.NewDecoder(&out); ; {
		p := new(pkg)
		if err := dec.Decode(p); err == io.EOF {
			return pkgs, nil
		} else if err != nil {
			return nil, err
		}
		pkgs = append(pkgs, p)
	}
}

func main() {
	patterns := os.Args[1:]
	if len(patterns) == 0 {
		patterns = []string{"./..."}
	}
	targets, errs, err := check(os.Stdout, patterns)
	if err != nil {
		fmt.Fprintln(os.Stderr, "darwincheck:", err)
		os.Exit(2)
	}
	fmt.Printf("darwincheck: %d packages type-checked for darwin/arm64, %d errors\n", targets, errs)
	if errs > 0 {
		os.Exit(1)
	}
}

// check type-checks patterns' darwin build, printing each error to w.
func check(w io.Writer, patterns []string) (targets, errs int, err error) {
	// The darwin file set, cgo files included, in dependency order.
	all, err := goList("1", append([]string{"-deps"}, patterns...)...)
	if err != nil {
		return 0, 0, err
	}
	// Export data for the standard library, compiled for darwin without cgo.
	var std []string
	for _, p := range all {
		if p.Standard && p.ImportPath != "C" && p.ImportPath != "unsafe" {
			std = append(std, p.ImportPath)
		}
	}
	exports := map[string]string{}
	if len(std) > 0 {
		listed, err := goList("0", append([]string{"-export"}, std...)...)
		if err != nil {
			return 0, 0, err
		}
		for _, p := range listed {
			exports[p.ImportPath] = p.Export
		}
	}
	fset := token.NewFileSet()
	gc := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		if f, ok := exports[path]; ok && f != "" {
			return os.Open(f)
		}
		return nil, fmt.Errorf("no darwin export data for %s", path)
	})
	checked := map[string]*types.Package{"unsafe": types.Unsafe}
	for _, p := range all {
		if p.Standard {
			continue
		}
		var files []*ast.File
		for _, name := range append(append([]string{}, p.GoFiles...), p.CgoFiles...) {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.ParseComments)
			if err != nil {
				fmt.Fprintln(w, err)
				errs++
				continue
			}
			files = append(files, f)
		}
		var pkgErrs []error
		conf := types.Config{FakeImportC: true, Error: func(err error) { pkgErrs = append(pkgErrs, err) },
			Importer: importerFunc(func(path string) (*types.Package, error) {
				if m, ok := p.ImportMap[path]; ok {
					path = m
				}
				if tp, ok := checked[path]; ok {
					return tp, nil
				}
				return gc.Import(path)
			})}
		tp, _ := conf.Check(p.ImportPath, fset, files, nil)
		checked[p.ImportPath] = tp
		if p.DepOnly {
			continue // report only the packages asked for
		}
		targets++
		if p.Error != nil && !strings.Contains(p.Error.Err, "build constraints exclude all Go files") {
			fmt.Fprintf(w, "%s: %s\n", p.ImportPath, p.Error.Err)
			errs++
		}
		for _, e := range pkgErrs {
			fmt.Fprintln(w, e)
			errs++
		}
	}
	return targets, errs, nil
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }
