package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// flagRE matches a command-line flag's name in text: --word.
var flagRE = regexp.MustCompile(`(^|[^-\w])--[a-z][a-z0-9-]*`)

// commandLayers are the directories of the packages that turn flags into configurations and
// errors back into the flags that set them (fanin is the fanin command's body): only they
// may name a flag in an error.
var commandLayers = []string{"cmd", "cli", "fanin", "test"}

// A library's error names what it was given (a field, a value), not the flag that set it:
// the command line knows the flag, and a library may be driven by other front ends. No
// fmt.Errorf or errors.New outside the commands' layers holds a flag's name.
func TestNoFlagNamesInLibraryErrors(t *testing.T) {
	fset := token.NewFileSet()
	err := walkGo(func(path string) error {
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		for _, l := range commandLayers {
			if strings.HasPrefix(rel, l+"/") {
				return nil
			}
		}
		file, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			pkg, ok := sel.X.(*ast.Ident)
			if !ok || !(pkg.Name == "fmt" && sel.Sel.Name == "Errorf" || pkg.Name == "errors" && sel.Sel.Name == "New") {
				return true
			}
			if text := literal(call.Args[0]); flagRE.MatchString(text) {
				t.Errorf("%s: %s.%s names a flag (%s): %q", fset.Position(call.Pos()), pkg.Name, sel.Sel.Name, strings.TrimSpace(flagRE.FindString(text)), text)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// literal is the text of a string literal or of a concatenation of them ("" for anything
// else).
func literal(e ast.Expr) string {
	switch v := e.(type) {
	case *ast.BasicLit:
		if v.Kind == token.STRING {
			s, _ := strconv.Unquote(v.Value)
			return s
		}
	case *ast.BinaryExpr:
		if v.Op == token.ADD {
			return literal(v.X) + literal(v.Y)
		}
	case *ast.ParenExpr:
		return literal(v.X)
	}
	return ""
}
