package gateway

import (
	"strings"
	"testing"
)

// TestYAMLErrorLine: a YAML syntax error names the line the problem is on,
// not the line its enclosing collection starts on.
func TestYAMLErrorLine(t *testing.T) {
	head := "upstreams:\n  - {name: up, base_url: \"http://x/v1\"}\nmodels:\n  - name: smart\n"
	for _, tc := range []struct{ name, yaml, want string }{
		{"indentation", head + "    primary: up/a\n   chain: [up/b]\n", "not valid YAML: line 6: did not find expected '-' indicator"},
		{"a tab", head + "\tprimary: up/a\n", "not valid YAML: line 5: found a tab character that violates indentation"},
		{"an unclosed list", head + "    primary: up/a\n    chain: [up/b\n  - name: other\n    primary: up/c\n", "not valid YAML: line 6: did not find expected ',' or ']'"},
		{"no line", "models: [", "not valid YAML: "},
	} {
		_, err := ParseConfig([]byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// FuzzYAMLProblem: yamlProblem never fails and always names a line the
// data has, when it names one.
func FuzzYAMLProblem(f *testing.F) {
	f.Add("models:\n  - name: a\n   b: c\n")
	f.Add("a: [\n")
	f.Add("\tx: 1\n")
	f.Fuzz(func(t *testing.T, s string) {
		_, err := ParseConfig([]byte(s))
		if err == nil {
			return
		}
		msg := err.Error()
		i := strings.Index(msg, "not valid YAML: line ")
		if i < 0 {
			return
		}
		var n int
		rest := msg[i+len("not valid YAML: line "):]
		for _, c := range rest {
			if c < '0' || c > '9' {
				break
			}
			n = n*10 + int(c-'0')
		}
		if n < 1 || n > strings.Count(s, "\n")+1 {
			t.Fatalf("line %d of %d lines: %s", n, strings.Count(s, "\n")+1, msg)
		}
	})
}
