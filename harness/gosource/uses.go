package gosource

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Imports returns the import paths of src, the text of the file path.
func Imports(path string, src []byte) ([]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.ImportsOnly)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(f.Imports))
	for _, imp := range f.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			return nil, fmt.Errorf("%s: import %s: %w", path, imp.Path.Value, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// Span is bytes [From, To) of a file.
type Span struct{ From, To int }

// SharedUse returns the files of the package in dir that own reports as
// some probe's own and that another Go file of the package uses
// something of (a top-level name, a method, a field): those are shared.
// The package is type-checked on its own, its imports left unresolved,
// which is enough to tell its own names from local ones.
//
// A list of probes (a package-level var's composite literal of nothing
// but names declared in probes' own files: a registry) is no use of
// them: it only lists them. The second result has each file's such
// lists, as spans of their elements.
func SharedUse(fsys fs.FS, dir string, files []string, own func(file string) bool) (map[string]bool, map[string][]Span, error) {
	fset := token.NewFileSet()
	var parsed []*ast.File
	for _, f := range files {
		if !strings.HasSuffix(f, ".go") || path.Dir(f) != dir {
			continue
		}
		b, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, nil, err
		}
		af, err := parser.ParseFile(fset, f, b, parser.SkipObjectResolution)
		if err != nil {
			return nil, nil, err
		}
		parsed = append(parsed, af)
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: noImports{}, Error: func(error) {}}
	pkg, _ := conf.Check(dir, fset, parsed, info)
	declaredIn := func(id *ast.Ident) string {
		if obj, ok := info.Uses[id]; ok && obj.Pkg() == pkg {
			return fset.Position(obj.Pos()).Filename
		}
		return ""
	}
	listed := map[*ast.Ident]bool{}
	lists := map[string][]Span{}
	for _, cl := range packageLists(parsed) {
		probes := true
		for _, e := range cl.Elts {
			probes = probes && own(declaredIn(e.(*ast.Ident)))
		}
		if !probes {
			continue
		}
		for _, e := range cl.Elts {
			listed[e.(*ast.Ident)] = true
		}
		f := fset.Position(cl.Pos()).Filename
		lists[f] = append(lists[f], Span{fset.Position(cl.Lbrace).Offset + 1, fset.Position(cl.Rbrace).Offset})
	}
	out := map[string]bool{}
	for id, obj := range info.Uses {
		if obj.Pkg() != pkg || listed[id] || (obj.Parent() != nil && obj.Parent() != pkg.Scope()) {
			continue
		}
		decl, use := fset.Position(obj.Pos()).Filename, fset.Position(id.Pos()).Filename
		if own(decl) && decl != use {
			out[decl] = true
		}
	}
	for f := range lists {
		slices.SortFunc(lists[f], func(a, b Span) int { return a.From - b.From })
	}
	return out, lists, nil
}

// noImports resolves no import: what a probe package imports is not what
// tells its files apart.
type noImports struct{}

func (noImports) Import(p string) (*types.Package, error) {
	return nil, fmt.Errorf("%s: not resolved", p)
}

// packageLists are the composite literals of package-level vars whose
// elements are all bare names.
func packageLists(files []*ast.File) []*ast.CompositeLit {
	var out []*ast.CompositeLit
	for _, af := range files {
		for _, d := range af.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, s := range g.Specs {
				for _, v := range s.(*ast.ValueSpec).Values {
					cl, ok := v.(*ast.CompositeLit)
					if ok && len(cl.Elts) > 0 && !slices.ContainsFunc(cl.Elts, func(e ast.Expr) bool { _, id := e.(*ast.Ident); return !id }) {
						out = append(out, cl)
					}
				}
			}
		}
	}
	return out
}
