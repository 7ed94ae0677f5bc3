package agent

import "fmt"

// MarshalText returns the kind's [EventKind.String] name, e.g.
// "turn-started". A value that is not one of the EventKind constants is an
// error.
func (k EventKind) MarshalText() ([]byte, error) {
	s := k.String()
	if s == EventKind(0).String() {
		return nil, fmt.Errorf("agent: cannot marshal invalid EventKind(%d)", int(k))
	}
	return []byte(s), nil
}

// UnmarshalText parses a name written by [EventKind.MarshalText]. Any other
// text is an error.
func (k *EventKind) UnmarshalText(text []byte) error {
	invalid := EventKind(0).String()
	for v := EventKind(1); v.String() != invalid; v++ {
		if v.String() == string(text) {
			*k = v
			return nil
		}
	}
	return fmt.Errorf("agent: unknown event kind %q", text)
}

// MarshalText returns the outcome's [Outcome.String] name, e.g. "refused". A
// value that is not one of the Outcome constants is an error.
func (o Outcome) MarshalText() ([]byte, error) {
	s := o.String()
	if s == Outcome(-1).String() {
		return nil, fmt.Errorf("agent: cannot marshal invalid Outcome(%d)", int(o))
	}
	return []byte(s), nil
}

// UnmarshalText parses a name written by [Outcome.MarshalText]. Any other text
// is an error.
func (o *Outcome) UnmarshalText(text []byte) error {
	invalid := Outcome(-1).String()
	for v := Outcome(0); v.String() != invalid; v++ {
		if v.String() == string(text) {
			*o = v
			return nil
		}
	}
	return fmt.Errorf("agent: unknown outcome %q", text)
}
