// Package enumtext writes and reads the small integer enums of loopctl's
// packages as their names (encoding.TextMarshaler and TextUnmarshaler), with
// one error text for every enum. It imports only the standard library, like
// the core packages that use it.
package enumtext

import (
	"fmt"
	"strings"
)

// Marshal returns names[v] as bytes. A value outside names is an error naming
// the package and the type, e.g. "breaker: cannot marshal invalid State(7)".
func Marshal[E ~int](pkg, typ string, v E, names []string) ([]byte, error) {
	if v < 0 || int(v) >= len(names) {
		return nil, fmt.Errorf("%s: cannot marshal invalid %s(%d)", pkg, typ, int(v))
	}
	return []byte(names[v]), nil
}

// Unmarshal returns the value whose name is text. Any other text is an error
// naming the package, what was read and the names it accepts, e.g.
// `breaker: unknown state "ajar" (want closed, open or half-open)`.
func Unmarshal[E ~int](pkg, what string, text []byte, names []string) (E, error) {
	for i, n := range names {
		if string(text) == n {
			return E(i), nil
		}
	}
	return 0, fmt.Errorf("%s: unknown %s %q (want %s)", pkg, what, text, list(names))
}

// list joins names as "a, b or c".
func list(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Set stores in dst the value whose name is text, as [Unmarshal] reads it, and
// leaves dst as it was on an error, which is Unmarshal's. It is the whole body
// of an UnmarshalText method, so that every enum reads its name one way.
func Set[E ~int](dst *E, pkg, what string, text []byte, names []string) error {
	v, err := Unmarshal[E](pkg, what, text, names)
	if err == nil {
		*dst = v
	}
	return err
}
