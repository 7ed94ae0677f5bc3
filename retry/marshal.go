package retry

import "fmt"

var (
	classTexts  = [...]string{Transient: "transient", RateLimited: "rate-limited", Permanent: "permanent"}
	jitterTexts = [...]string{FullJitter: "full", ProportionalJitter: "proportional"}
)

// MarshalText returns the class's name ("transient", "rate-limited",
// "permanent"). Any other value is an error.
func (c Class) MarshalText() ([]byte, error) {
	if c < 0 || int(c) >= len(classTexts) {
		return nil, fmt.Errorf("retry: cannot marshal invalid Class(%d)", int(c))
	}
	return []byte(classTexts[c]), nil
}

// UnmarshalText parses a name written by [Class.MarshalText]. Any other text
// is an error.
func (c *Class) UnmarshalText(text []byte) error {
	for i, n := range classTexts {
		if string(text) == n {
			*c = Class(i)
			return nil
		}
	}
	return fmt.Errorf("retry: unknown class %q (want transient, rate-limited or permanent)", text)
}

// MarshalText returns the jitter's name ("full", "proportional"). Any other
// value is an error.
func (j Jitter) MarshalText() ([]byte, error) {
	if j < 0 || int(j) >= len(jitterTexts) {
		return nil, fmt.Errorf("retry: cannot marshal invalid Jitter(%d)", int(j))
	}
	return []byte(jitterTexts[j]), nil
}

// UnmarshalText parses a name written by [Jitter.MarshalText]. Any other text
// is an error.
func (j *Jitter) UnmarshalText(text []byte) error {
	for i, n := range jitterTexts {
		if string(text) == n {
			*j = Jitter(i)
			return nil
		}
	}
	return fmt.Errorf("retry: unknown jitter %q (want full or proportional)", text)
}
