package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// contracts are the normative files of docs/: their Go blocks are
// signatures, not snippets, and TestSnippetsCompiled leaves them alone.
var contracts = map[string]bool{"SEMANTICS.md": true, "API.md": true, "GATEWAY.md": true, "FLEET.md": true}

// guides returns README.md and every docs/*.md that is not a contract, as
// paths under root.
func guides(t *testing.T, root string) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files := []string{filepath.Join(root, "README.md")}
	for _, d := range docs {
		if !contracts[filepath.Base(d)] {
			files = append(files, d)
		}
	}
	return files
}

// snippetMarker names, on the line above a ```go block, the test file (from
// the repository's root) and the Example or Test function that runs the
// block's lines.
var snippetMarker = regexp.MustCompile(`^<!-- snippet: (\S+_test\.go) ((?:Example|Test)\w*) -->$`)

// snippet is one ```go block of a guide.
type snippet struct {
	line       int      // the fence's line number, from 1
	file, name string   // from its marker ("" when it has none)
	body       []string // its lines
}

// snippets returns the ```go blocks of the Markdown text md.
func snippets(md string) []snippet {
	lines := strings.Split(md, "\n")
	var out []snippet
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "```go" {
			continue
		}
		s := snippet{line: i + 1}
		if i > 0 {
			if m := snippetMarker.FindStringSubmatch(lines[i-1]); m != nil {
				s.file, s.name = m[1], m[2]
			}
		}
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			s.body = append(s.body, lines[i])
		}
		out = append(out, s)
	}
	return out
}

// normalized is a line with its spaces collapsed (gofmt aligns comments),
// "" for a blank one.
func normalized(line string) string { return strings.Join(strings.Fields(line), " ") }

// funcLines returns the lines of the function name in the Go file path.
func funcLines(path, name string) ([]string, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.Name == name {
			start, end := fset.Position(fd.Pos()).Offset, fset.Position(fd.End()).Offset
			return strings.Split(string(src[start:end]), "\n"), nil
		}
	}
	return nil, os.ErrNotExist
}

// missingLine returns the first non-blank line of body that does not appear,
// in order, among have ("" when every one does).
func missingLine(body, have []string) string {
	j := 0
	for _, l := range body {
		want := normalized(l)
		if want == "" {
			continue
		}
		for j < len(have) && normalized(have[j]) != want {
			j++
		}
		if j == len(have) {
			return want
		}
		j++
	}
	return ""
}

// TestSnippetsCompiled: every ```go block of README.md and of the guides in
// docs/ is code CI compiles and runs. The line above it names an Example or
// Test function of a *_test.go file (<!-- snippet: fleet/guide_test.go
// TestGuideDial -->), and the block's non-blank lines appear, in order, in
// that function (spaces collapsed; the function may add lines between them).
func TestSnippetsCompiled(t *testing.T) {
	root := repoRoot(t)
	count := 0
	for _, md := range guides(t, root) {
		b, err := os.ReadFile(md)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, md)
		for _, s := range snippets(string(b)) {
			count++
			if s.file == "" {
				t.Errorf("%s:%d: a ```go block without a <!-- snippet: path_test.go ExampleOrTestName --> line above it", rel, s.line)
				continue
			}
			have, err := funcLines(filepath.Join(root, filepath.FromSlash(s.file)), s.name)
			if err != nil {
				t.Errorf("%s:%d: the snippet's function %s in %s: %v", rel, s.line, s.name, s.file, err)
				continue
			}
			if line := missingLine(s.body, have); line != "" {
				t.Errorf("%s:%d: %s in %s lacks the snippet's line (or has it out of order):\n\t%s", rel, s.line, s.name, s.file, line)
			}
		}
	}
	if count == 0 {
		t.Error("no ```go block found: the guides have moved?")
	}
}
