package docs

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// corePackages import only the standard library, the module's internal
// packages and each other: a library user who takes a
// breaker takes no cloud SDK with it (the gateway's AWS, Google and Azure
// SDKs stay in gateway and cmd).
var corePackages = []string{"breaker", "health", "fallback", "retry", "pool"}

// TestCoreImports follows the non-test imports of every core package
// through the module's own packages and fails on any package outside the
// standard library, the module's internal/ tree and the core.
func TestCoreImports(t *testing.T) {
	root := repoRoot(t)
	allowed := func(rel string) bool {
		for _, c := range corePackages {
			if rel == c {
				return true
			}
		}
		return strings.HasPrefix(rel, "internal/")
	}
	seen := map[string]bool{}
	queue := append([]string(nil), corePackages...)
	for len(queue) > 0 {
		rel := queue[0]
		queue = queue[1:]
		if seen[rel] {
			continue
		}
		seen[rel] = true
		for file, imp := range packageImports(t, filepath.Join(root, rel)) {
			for _, p := range imp {
				switch first, _, _ := strings.Cut(p, "/"); {
				case !strings.Contains(first, "."):
				case strings.HasPrefix(p, module+"/") && allowed(strings.TrimPrefix(p, module+"/")):
					queue = append(queue, strings.TrimPrefix(p, module+"/"))
				default:
					t.Errorf("%s/%s imports %s: a core package's imports are the standard library's and the core's", rel, file, p)
				}
			}
		}
	}
}

// packageImports returns the imports of each non-test Go file in dir.
func packageImports(t *testing.T, dir string) map[string][]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, name), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			out[name] = append(out[name], p)
		}
	}
	return out
}
