package llmtest

import "fmt"

// firstProblem is the first problem a wire's decode notes in a request: the
// message of the 400 the server answers it with ("" when there is none).
type firstProblem string

// note records a problem unless an earlier one is recorded already.
func (p *firstProblem) note(format string, args ...any) {
	if *p == "" {
		*p = firstProblem(fmt.Sprintf(format, args...))
	}
}
