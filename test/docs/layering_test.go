package docs

import (
	"bufio"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/rpcrdma-bench/rpcrdma-bench/"

// ARCHITECTURE.md's import table holds: every package of the module has a row, and imports
// of this module only what its row lists ("any" for no limit; a row "dir/..." covers every
// package under dir), so that the layers drawn there are the layers built.
func TestLayering(t *testing.T) {
	rows := importTable(t)
	for pkg, imports := range moduleImports(t) {
		allowed, ok := rowFor(rows, pkg)
		if !ok {
			t.Errorf("package %s has no row in ARCHITECTURE.md's import table", pkg)
			continue
		}
		if allowed == nil {
			continue
		}
		for _, imp := range imports {
			if !slices.Contains(allowed, imp) {
				t.Errorf("%s imports %s, which its row in ARCHITECTURE.md does not list (%s)", pkg, imp, strings.Join(allowed, ", "))
			}
		}
	}
	for pkg := range rows {
		if strings.HasSuffix(pkg, "/...") {
			continue
		}
		if _, err := os.Stat(filepath.Join(root, pkg)); err != nil {
			t.Errorf("ARCHITECTURE.md's import table names %s, which does not exist", pkg)
		}
	}
}

// importTable reads the table under "What each package may import": package -> allowed
// imports, nil for "any".
func importTable(t *testing.T) map[string][]string {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows := map[string][]string{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "| package | may import |") {
			in = true
			continue
		}
		if !in || strings.HasPrefix(line, "|---") {
			continue
		}
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 2 {
			t.Fatalf("import table row %q: want two cells", line)
		}
		pkg, _, _ := strings.Cut(strings.TrimSpace(cells[0]), " ")
		allowed := []string{}
		switch v := strings.TrimSpace(cells[1]); v {
		case "any":
			allowed = nil
		case "":
		default:
			for _, a := range strings.Split(v, ",") {
				allowed = append(allowed, strings.TrimSpace(a))
			}
		}
		rows[pkg] = allowed
	}
	if len(rows) == 0 {
		t.Fatal("ARCHITECTURE.md has no import table (a header row \"| package | may import |\")")
	}
	return rows
}

func rowFor(rows map[string][]string, pkg string) ([]string, bool) {
	if a, ok := rows[pkg]; ok {
		return a, true
	}
	for p, a := range rows {
		if dir, ok := strings.CutSuffix(p, "/..."); ok && strings.HasPrefix(pkg, dir+"/") {
			return a, true
		}
	}
	return nil, false
}

// moduleImports lists, per package directory, the packages of this module its non-test
// files import, whatever their build tags.
func moduleImports(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	fset := token.NewFileSet()
	err := walkGo(func(path string) error {
		file, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		if _, ok := out[rel]; !ok {
			out[rel] = nil
		}
		for _, is := range file.Imports {
			p, _ := strconv.Unquote(is.Path.Value)
			if imp, ok := strings.CutPrefix(p, module); ok && !slices.Contains(out[rel], imp) {
				out[rel] = append(out[rel], imp)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
