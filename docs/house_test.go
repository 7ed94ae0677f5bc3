// Package docs holds the contract files (SEMANTICS, API, GATEWAY, FLEET) and
// the guides. Its tests check the house rules a reader relies on: every
// link in the README and in docs/ resolves, the README stays a short map
// linking every guide, every Go snippet of the guides is code that runs, and
// functions fit on a screen.
package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// maxLines is the longest a function body may be, in lines from its func
// keyword to its closing brace.
const maxLines = 60

// longAllowed lists the functions allowed to be longer than maxLines, as
// "path:Name" (methods as "path:Type.Name"): data tables only, each with the
// reason it is one.
var longAllowed = map[string]string{}

// repoRoot is the module's root directory, one level up from docs/.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// goFiles returns the repository's non-test Go files, relative to root,
// skipping node_modules and the bench module's results.
func goFiles(t *testing.T, root string) []string {
	t.Helper()
	return walkGo(t, root, false, true)
}

// funcName is "Name" or "Type.Name".
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	typ := fd.Recv.List[0].Type
	for {
		switch x := typ.(type) {
		case *ast.StarExpr:
			typ = x.X
			continue
		case *ast.IndexExpr:
			typ = x.X
			continue
		case *ast.IndexListExpr:
			typ = x.X
			continue
		case *ast.Ident:
			return x.Name + "." + fd.Name.Name
		}
		return fd.Name.Name
	}
}

// TestFunctionLength fails on every function over maxLines lines that is
// not on longAllowed, and when the 90th percentile passes 35 lines.
func TestFunctionLength(t *testing.T) {
	root := repoRoot(t)
	fset := token.NewFileSet()
	var lengths []int
	seen := map[string]bool{}
	for _, rel := range goFiles(t, root) {
		f, err := parser.ParseFile(fset, filepath.Join(root, rel), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
			lengths = append(lengths, n)
			key := rel + ":" + funcName(fd)
			if n <= maxLines {
				continue
			}
			seen[key] = true
			if _, ok := longAllowed[key]; ok {
				continue
			}
			t.Errorf("%s is %d lines (over %d): split it by what it does", key, n, maxLines)
		}
	}
	for key := range longAllowed {
		if !seen[key] {
			t.Errorf("longAllowed lists %s, which is not over %d lines (or is gone): remove it", key, maxLines)
		}
	}
	slices.Sort(lengths)
	if p90 := lengths[len(lengths)*9/10]; p90 > 35 {
		t.Errorf("90th percentile of function length is %d lines, want at most 35", p90)
	}
}

// mdLink matches a Markdown link's target: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// maxReadmeLines is the longest README.md may be: it is the map, and the
// guides in docs/ hold the manual.
const maxReadmeLines = 250

// markdownFiles returns README.md and every docs/*.md, as paths under root.
func markdownFiles(t *testing.T, root string) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{filepath.Join(root, "README.md")}, docs...)
}

// anchors returns the heading anchors of the Markdown text md as GitHub
// makes them: lower case, spaces to hyphens, punctuation other than hyphens
// and underscores dropped, "-1", "-2"... on repeats. Fenced code is skipped.
func anchors(md string) map[string]bool {
	out := map[string]bool{}
	fenced := false
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		slug := b.String()
		for n := 1; out[slug]; n++ {
			slug = b.String() + "-" + strconv.Itoa(n)
		}
		out[slug] = true
	}
	return out
}

// TestLinksResolve checks that every relative link in README.md and in every
// docs/*.md names a file or directory of the repository, and that an anchor
// into a Markdown file names one of its headings (web links are left to the
// reader).
func TestLinksResolve(t *testing.T) {
	root := repoRoot(t)
	for _, md := range markdownFiles(t, root) {
		b, err := os.ReadFile(md)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, md)
		for _, m := range mdLink.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			file := md
			if path != "" {
				file = filepath.Join(filepath.Dir(md), path)
			}
			if _, err := os.Stat(file); err != nil {
				t.Errorf("%s links to %s, which does not exist", rel, m[1])
				continue
			}
			if anchor == "" || !strings.HasSuffix(file, ".md") {
				continue
			}
			text, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if !anchors(string(text))[anchor] {
				t.Errorf("%s links to %s, whose file has no heading #%s", rel, m[1], anchor)
			}
		}
	}
}

// TestGuidesLinked: README.md is the map, so it links to every file of
// docs/ that is Markdown.
func TestGuidesLinked(t *testing.T) {
	root := repoRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, md := range markdownFiles(t, root)[1:] {
		if !strings.Contains(string(readme), "](docs/"+filepath.Base(md)) {
			t.Errorf("README.md does not link to docs/%s", filepath.Base(md))
		}
	}
}

// TestReadmeShort: README.md is a map of at most maxReadmeLines lines.
func TestReadmeShort(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > maxReadmeLines {
		t.Errorf("README.md has %d lines, want at most %d: move the detail to a guide in docs/", n, maxReadmeLines)
	}
}
