package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// module is the import path of the repository's module.
const module = "github.com/loopctl/loopctl-go"

// revisionLabel matches a revision label: "rev 3", "Revision 4", "(rev 2)",
// "rev-3", "rev4". A reader needs the rule and its reason; the history
// belongs in git and docs/SEMANTICS.md.
var revisionLabel = regexp.MustCompile(`(?i)\brev(ision)?[ .-]?\d`)

// maxRevisionLabels is how many comment lines of the module's non-test code
// may still carry a revision label: "fewer than 10".
const maxRevisionLabels = 9

// moduleFiles returns the module's Go files (tests included when tests),
// relative to root: nested modules (bench/) are modules of their own.
func moduleFiles(t *testing.T, root string, tests bool) []string {
	t.Helper()
	return walkGo(t, root, tests, false)
}

// walkGo returns the Go files below root, relative to it (tests included
// when tests; nested modules and their results/ when nested), skipping
// node_modules and dot directories.
func walkGo(t *testing.T, root string, tests, nested bool) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root {
			if d.Name() == "node_modules" || d.Name() == "results" || strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil && !nested {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || !tests && strings.HasSuffix(p, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		files = append(files, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// parse parses the Go file rel of root with its comments.
func parse(t *testing.T, fset *token.FileSet, root, rel string) *ast.File {
	t.Helper()
	f, err := parser.ParseFile(fset, filepath.Join(root, rel), nil, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestRevisionLabels fails when maxRevisionLabels or more comment lines of
// the module's non-test code carry a revision label, listing them.
func TestRevisionLabels(t *testing.T) {
	root := repoRoot(t)
	fset := token.NewFileSet()
	var found []string
	for _, rel := range moduleFiles(t, root, false) {
		for _, cg := range parse(t, fset, root, rel).Comments {
			for _, c := range cg.List {
				for i, line := range strings.Split(c.Text, "\n") {
					if revisionLabel.MatchString(line) {
						found = append(found, rel+":"+strconv.Itoa(fset.Position(c.Pos()).Line+i)+": "+strings.TrimSpace(line))
					}
				}
			}
		}
	}
	if len(found) > maxRevisionLabels {
		t.Errorf("%d comment lines carry a revision label (at most %d): say the rule and its reason instead\n%s",
			len(found), maxRevisionLabels, strings.Join(found, "\n"))
	}
}

// TestRevisionFileNames fails on every file of the repository (tests and
// other modules included) named after a revision: a file is named for its
// subject.
func TestRevisionFileNames(t *testing.T) {
	root := repoRoot(t)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (d.Name() == "node_modules" || d.Name() == "results" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if revisionLabel.MatchString(strings.ReplaceAll(d.Name(), "_", " ")) {
			rel, _ := filepath.Rel(root, p)
			t.Errorf("%s is named after a revision: name it for what it holds", filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// maxGatewayFields is the most fields a struct of package gateway may have:
// a struct that grows past it mixes lifetimes or concerns, and is split by
// them (the request's exchange: intake, walk, reply).
const maxGatewayFields = 20

// TestGatewayStructFields fails on every struct type of package gateway
// (its tests included) with more than maxGatewayFields fields.
func TestGatewayStructFields(t *testing.T) {
	root := repoRoot(t)
	fset := token.NewFileSet()
	for _, rel := range moduleFiles(t, root, true) {
		if path.Dir(rel) != "gateway" {
			continue
		}
		ast.Inspect(parse(t, fset, root, rel), func(n ast.Node) bool {
			st, ok := n.(*ast.StructType)
			if !ok {
				return true
			}
			fields := 0
			for _, f := range st.Fields.List {
				fields += max(len(f.Names), 1)
			}
			if fields > maxGatewayFields {
				t.Errorf("%s: a struct of %d fields (at most %d): group them by concern or lifetime",
					fset.Position(st.Pos()), fields, maxGatewayFields)
			}
			return true
		})
	}
}

// TestOwnImportsUnaliased fails on every import of a package of this module
// under another name than its own (tests included): a reader meets one name
// for one package.
func TestOwnImportsUnaliased(t *testing.T) {
	root := repoRoot(t)
	fset := token.NewFileSet()
	for _, rel := range moduleFiles(t, root, true) {
		f, err := parser.ParseFile(fset, filepath.Join(root, rel), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if imp.Name == nil || imp.Name.Name == "_" || p != module && !strings.HasPrefix(p, module+"/") {
				continue
			}
			if imp.Name.Name != path.Base(p) {
				t.Errorf("%s imports %s as %s: import it under its own name", fset.Position(imp.Pos()), p, imp.Name.Name)
			}
		}
	}
}
