package testkit

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
)

// RunAlone lists the top-level tests of the package in the current
// directory that run alone: they neither call a function named in marks
// (t.Parallel's "Parallel", or a package helper such as "parallel"),
// directly or through a function of the package that does, nor are
// listed in serial. A test that runs alone holds up every parallel test
// of its package until it ends, so its whole time lands on the package's
// wall time. Calls inside a function literal (a t.Run subtest) do not
// count: they make the subtests parallel to each other, not the test to
// the rest.
func RunAlone(serial map[string]bool, marks ...string) ([]string, error) {
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	funcs := map[string]*ast.FuncDecl{}
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
				funcs[funcKey(fd)] = fd
			}
		}
	}
	marking := map[string]bool{}
	for _, m := range marks {
		marking[m] = true
	}
	for changed := true; changed; {
		changed = false
		for name, fd := range funcs {
			if !marking[name] && callsAny(fd.Body, marking) {
				marking[name], changed = true, true
			}
		}
	}
	var alone []string
	for name, fd := range funcs {
		if strings.HasPrefix(name, "Test") && name != "TestMain" && fd.Recv == nil && !serial[name] && !marking[name] {
			alone = append(alone, name)
		}
	}
	slices.Sort(alone)
	return alone, nil
}

// funcKey names a function by its name, a method by Type.name.
func funcKey(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	typ := fd.Recv.List[0].Type
	if s, ok := typ.(*ast.StarExpr); ok {
		typ = s.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}

// callsAny reports whether body calls, outside function literals, a
// function named in names or a method whose name is the last part of one
// of them (a method of the package: "rig.start"; or "Parallel").
func callsAny(body *ast.BlockStmt, names map[string]bool) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.CallExpr:
			switch fn := n.Fun.(type) {
			case *ast.Ident:
				found = found || names[fn.Name]
			case *ast.SelectorExpr:
				for key := range names {
					if key == fn.Sel.Name || strings.HasSuffix(key, "."+fn.Sel.Name) {
						found = true
					}
				}
			}
		}
		return !found
	})
	return found
}
