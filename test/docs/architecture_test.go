// Package docs checks that the repository's documents name what exists.
package docs

import (
	"bufio"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// root is the repository's top directory, from this package's.
const root = "../.."

var (
	// symbolRE matches a backticked Package.Symbol or Package.Type.Member, optionally called.
	symbolRE = regexp.MustCompile("`([a-z][a-z0-9]*)\\.([A-Z][A-Za-z0-9_]*)(?:\\.([A-Za-z_][A-Za-z0-9_]*))?(?:\\(\\))?`")
	// memberRE matches a backticked Type.Member without its package.
	memberRE = regexp.MustCompile("`([A-Z][A-Za-z0-9_]*)\\.([A-Za-z_][A-Za-z0-9_]*)(?:\\(\\))?`")
	// fileSymsRE matches a backticked Go file followed by the symbols it holds in parentheses:
	// `rpcrdma/header.go` (`ErrorReply`, the rest).
	fileSymsRE = regexp.MustCompile("`((?:[A-Za-z0-9_.-]+/)+)[A-Za-z0-9_.-]+\\.go` \\(([^)]*)\\)")
	identRE    = regexp.MustCompile("`([A-Za-z_][A-Za-z0-9_]*)`")
	// pathRE matches a backticked repository path: a directory or file with a slash in it.
	pathRE = regexp.MustCompile("`((?:[A-Za-z0-9_.-]+/)+[A-Za-z0-9_.-]*)`")
)

// Every Package.Symbol that ARCHITECTURE.md names in backticks is declared in a package of
// that name in this repository (or is the standard library's), every Type.Member in some
// package, every symbol listed after a file in the package of that file's directory, and
// every path it names exists, so that code moving between packages leaves no stale map behind.
func TestArchitectureNamesExist(t *testing.T) {
	pkgs := loadPackages(t)
	f, err := os.Open(filepath.Join(root, "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	checked := 0
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		for _, m := range symbolRE.FindAllStringSubmatch(text, -1) {
			pkg, sym, member := m[1], m[2], m[3]
			name := strings.Trim(m[0], "`")
			ps, ok := pkgs[pkg]
			if !ok {
				if isStd(pkg) {
					continue
				}
				t.Errorf("ARCHITECTURE.md:%d names `%s`: no package %s in the repository", line, name, pkg)
				continue
			}
			checked++
			if !anyDeclares(ps, sym, member) {
				what := sym
				if member != "" {
					what += "." + member
				}
				t.Errorf("ARCHITECTURE.md:%d names `%s`: package %s (%s) declares no %s", line, name, pkg, dirsOf(ps), what)
			}
		}
		for _, m := range memberRE.FindAllStringSubmatch(text, -1) {
			checked++
			if !anyPackageDeclares(pkgs, m[1], m[2]) {
				t.Errorf("ARCHITECTURE.md:%d names `%s.%s`: no package declares a type %s with a member %s", line, m[1], m[2], m[1], m[2])
			}
		}
		for _, m := range fileSymsRE.FindAllStringSubmatch(text, -1) {
			dir := filepath.Clean(filepath.Join(root, m[1]))
			for _, id := range identRE.FindAllStringSubmatch(m[2], -1) {
				checked++
				if !dirDeclares(pkgs, dir, id[1]) {
					t.Errorf("ARCHITECTURE.md:%d names `%s` in %s: that package declares no %s (not as a function, type, value or method)", line, id[1], m[1], id[1])
				}
			}
		}
		for _, m := range pathRE.FindAllStringSubmatch(text, -1) {
			p := strings.TrimSuffix(m[1], "/")
			if _, err := os.Stat(filepath.Join(root, p)); err != nil {
				t.Errorf("ARCHITECTURE.md:%d names path `%s`, which does not exist", line, m[1])
			}
			checked++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("ARCHITECTURE.md names no Package.Symbol and no path: the patterns no longer match it")
	}
}

// pkgDecls is one package directory's declarations: top-level names, and per type name its
// methods, struct fields and interface methods.
type pkgDecls struct {
	dir     string
	top     map[string]bool
	members map[string]map[string]bool
}

// loadPackages parses every non-test Go file of the repository (whatever its build tags),
// grouped by package name.
func loadPackages(t *testing.T) map[string][]*pkgDecls {
	t.Helper()
	byDir := map[string]*pkgDecls{}
	byName := map[string][]*pkgDecls{}
	fset := token.NewFileSet()
	err := walkGo(func(path string) error {
		file, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		dir := filepath.Dir(path)
		p := byDir[dir]
		if p == nil {
			rel, _ := filepath.Rel(root, dir)
			p = &pkgDecls{dir: rel, top: map[string]bool{}, members: map[string]map[string]bool{}}
			byDir[dir] = p
			byName[file.Name.Name] = append(byName[file.Name.Name], p)
		}
		p.add(file)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return byName
}

func (p *pkgDecls) member(typ, name string) {
	if p.members[typ] == nil {
		p.members[typ] = map[string]bool{}
	}
	p.members[typ][name] = true
}

func (p *pkgDecls) add(f *ast.File) {
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				p.top[d.Name.Name] = true
				continue
			}
			if typ := recvType(d.Recv.List[0].Type); typ != "" {
				p.member(typ, d.Name.Name)
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					p.top[s.Name.Name] = true
					switch tt := s.Type.(type) {
					case *ast.StructType:
						for _, fld := range tt.Fields.List {
							for _, n := range fld.Names {
								p.member(s.Name.Name, n.Name)
							}
							if len(fld.Names) == 0 { // embedded: its type name is the field's
								if n := recvType(fld.Type); n != "" {
									p.member(s.Name.Name, n)
								}
							}
						}
					case *ast.InterfaceType:
						for _, m := range tt.Methods.List {
							for _, n := range m.Names {
								p.member(s.Name.Name, n.Name)
							}
						}
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						p.top[n.Name] = true
					}
				}
			}
		}
	}
}

// recvType is the type name of a receiver or embedded field: T, *T, T[P], pkg.T.
func recvType(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.StarExpr:
		return recvType(e.X)
	case *ast.IndexExpr:
		return recvType(e.X)
	case *ast.IndexListExpr:
		return recvType(e.X)
	case *ast.SelectorExpr:
		return e.Sel.Name
	}
	return ""
}

func anyDeclares(ps []*pkgDecls, sym, member string) bool {
	for _, p := range ps {
		if !p.top[sym] {
			continue
		}
		if member == "" || p.members[sym][member] {
			return true
		}
	}
	return false
}

func anyPackageDeclares(pkgs map[string][]*pkgDecls, typ, member string) bool {
	for _, ps := range pkgs {
		if anyDeclares(ps, typ, member) {
			return true
		}
	}
	return false
}

// dirDeclares says whether the package in dir declares name at top level or as a method or
// member of one of its types.
func dirDeclares(pkgs map[string][]*pkgDecls, dir, name string) bool {
	for _, ps := range pkgs {
		for _, p := range ps {
			if filepath.Clean(filepath.Join(root, p.dir)) != dir {
				continue
			}
			if p.top[name] {
				return true
			}
			for _, ms := range p.members {
				if ms[name] {
					return true
				}
			}
		}
	}
	return false
}

func dirsOf(ps []*pkgDecls) string {
	var dirs []string
	for _, p := range ps {
		dirs = append(dirs, filepath.ToSlash(p.dir)+"/")
	}
	return strings.Join(dirs, ", ")
}

// isStd says whether name is a standard library package (runtime, os, ...).
func isStd(name string) bool {
	p, err := build.Default.Import(name, "", build.FindOnly)
	return err == nil && p.Goroot
}

// walkGo calls fn with the path of every non-test Go file of the repository, whatever its
// build tags, outside hidden directories, build output and test data.
func walkGo(fn func(path string) error) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "build" || n == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		return fn(path)
	})
}
