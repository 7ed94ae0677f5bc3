package gateway

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// yamlProblem is a YAML syntax error of data as --check prints it, with
// the line the problem is on. The YAML parser names the line where the
// enclosing collection starts ("line 3" for a bad indentation on line
// 6), which sends a person to the wrong place: the problem's line is the
// first line at which data, cut after it, fails to parse the same way.
func yamlProblem(data []byte, err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	what, ok := yamlWhat(msg)
	if !ok {
		return msg
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	for n := 1; n <= len(lines); n++ {
		var doc yaml.Node
		e := yaml.Unmarshal(bytes.Join(lines[:n], nil), &doc)
		if e == nil {
			continue
		}
		if w, ok := yamlWhat(strings.TrimPrefix(e.Error(), "yaml: ")); ok && w == what {
			return fmt.Sprintf("line %d: %s", n, what)
		}
	}
	return msg
}

// yamlWhat returns the text after "line N: " of a YAML error message.
func yamlWhat(msg string) (string, bool) {
	rest, ok := strings.CutPrefix(msg, "line ")
	if !ok {
		return "", false
	}
	num, what, ok := strings.Cut(rest, ": ")
	if _, err := strconv.Atoi(num); !ok || err != nil {
		return "", false
	}
	return what, true
}
