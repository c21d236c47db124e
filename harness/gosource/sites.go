// Package gosource reads the module's own Go source for the harness: where
// the planted sites are, what a file imports, and which of a package's
// files use each other's names. It is the one place that parses Go
// source, so the Stryker report, the step summary's annotations and
// `mutate --since` agree on where a site is, and the renderers read
// only the model.
package gosource

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"slices"
	"strings"
	"unicode/utf16"
)

// Pos is a place in a file: a 1-based line, and 1-based columns counted
// in bytes (as go/token counts them) and in UTF-16 code units (as
// JavaScript strings, and so Stryker's report, count them).
type Pos struct{ Line, Column, UTF16Column int }

// Lines is a span of whole lines, both ends included.
type Lines struct{ From, To int }

// Site is one planted site: a call mutants.On(mutants.<Const>).
type Site struct {
	// Start and End span the call.
	Start, End Pos
	// Decl is the top-level declaration that holds the call.
	Decl Lines
}

// Sites are the planted sites of one file, by defect.
type Sites struct {
	// byID maps a constant's spelling folded (see Fold) to its calls, in
	// source order.
	byID map[string][]Site
}

// Fold spells a defect id or its constant for comparison: no_pid_ns and
// NoPIDNS are both nopidns.
func Fold(s string) string { return strings.ReplaceAll(strings.ToLower(s), "_", "") }

// ParseSites finds the planted sites in src, the text of the file path.
func ParseSites(path string, src []byte) (*Sites, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", path, err)
	}
	lines := strings.SplitAfter(string(src), "\n")
	pos := func(p token.Pos) Pos {
		tp := fset.Position(p)
		prefix := lines[tp.Line-1][:tp.Column-1]
		return Pos{tp.Line, tp.Column, len(utf16.Encode([]rune(prefix))) + 1}
	}
	s := &Sites{byID: map[string][]Site{}}
	for _, decl := range f.Decls {
		span := Lines{fset.Position(decl.Pos()).Line, fset.Position(decl.End()).Line}
		ast.Inspect(decl, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if name, ok := gateConst(call); ok {
				key := Fold(name)
				s.byID[key] = append(s.byID[key], Site{Start: pos(call.Pos()), End: pos(call.End()), Decl: span})
			}
			return true
		})
	}
	return s, nil
}

// ReadSites reads path from fsys and finds its planted sites.
func ReadSites(fsys fs.FS, path string) (*Sites, error) {
	b, err := fs.ReadFile(fsys, path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return ParseSites(path, b)
}

// Of returns the planted sites of defect id, in source order.
func (s *Sites) Of(id string) []Site { return slices.Clone(s.byID[Fold(id)]) }

// Locate returns the planted sites of defect id in the file path of
// fsys. A file without one is an error: the registry names the file, so
// a site that is not there has moved or gone.
func Locate(fsys fs.FS, path, id string) ([]Site, error) {
	s, err := ReadSites(fsys, path)
	if err != nil {
		return nil, fmt.Errorf("reading the site of %s: %w", id, err)
	}
	out := s.Of(id)
	if len(out) == 0 {
		return nil, fmt.Errorf("no mutants.On call for %s in %s", id, path)
	}
	return out, nil
}

// LineFunc returns a function that gives the line of a defect's first
// planted site, looked up under the first of roots whose file has it,
// and line 1 (the file is still right) when none has it. Lines move with
// every edit, so they are looked up when they are needed.
func LineFunc(roots ...fs.FS) func(path, id string) int {
	return func(path, id string) int {
		for _, r := range roots {
			if sites, err := Locate(r, path, id); err == nil {
				return sites[0].Start.Line
			}
		}
		return 1
	}
}

// gateConst reports whether call is mutants.On(mutants.<Const>), and
// which constant it names.
func gateConst(call *ast.CallExpr) (string, bool) {
	if !isSel(call.Fun, "mutants", "On") || len(call.Args) != 1 {
		return "", false
	}
	arg, ok := call.Args[0].(*ast.SelectorExpr)
	if !ok || !isIdent(arg.X, "mutants") {
		return "", false
	}
	return arg.Sel.Name, true
}

// isSel reports whether e is pkg.name.
func isSel(e ast.Expr, pkg, name string) bool {
	sel, ok := e.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == name && isIdent(sel.X, pkg)
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}
