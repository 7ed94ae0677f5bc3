package retry

import "github.com/loopctl/loopctl-go/internal/enumtext"

var (
	classTexts  = [...]string{Transient: "transient", RateLimited: "rate-limited", Permanent: "permanent"}
	jitterTexts = [...]string{FullJitter: "full", ProportionalJitter: "proportional"}
	limitTexts  = [...]string{NoLimit: "none", Throttle: "throttle", Quota: "quota", Overload: "overload"}
)

// MarshalText returns the class's name ("transient", "rate-limited",
// "permanent"). Any other value is an error.
func (c Class) MarshalText() ([]byte, error) {
	return enumtext.Marshal("retry", "Class", c, classTexts[:])
}

// UnmarshalText parses a name written by [Class.MarshalText]. Any other text
// is an error.
func (c *Class) UnmarshalText(text []byte) error {
	return enumtext.Set(c, "retry", "class", text, classTexts[:])
}

// MarshalText returns the jitter's name ("full", "proportional"). Any other
// value is an error.
func (j Jitter) MarshalText() ([]byte, error) {
	return enumtext.Marshal("retry", "Jitter", j, jitterTexts[:])
}

// UnmarshalText parses a name written by [Jitter.MarshalText]. Any other text
// is an error.
func (j *Jitter) UnmarshalText(text []byte) error {
	return enumtext.Set(j, "retry", "jitter", text, jitterTexts[:])
}

// MarshalText returns the limit's name ("none", "throttle", "quota",
// "overload"). Any other value is an error.
func (l Limit) MarshalText() ([]byte, error) {
	return enumtext.Marshal("retry", "Limit", l, limitTexts[:])
}

// UnmarshalText parses a name written by [Limit.MarshalText]. Any other text
// is an error.
func (l *Limit) UnmarshalText(text []byte) error {
	return enumtext.Set(l, "retry", "limit", text, limitTexts[:])
}
