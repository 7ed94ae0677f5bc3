package gateway

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// ParseConfig parses a YAML configuration (docs/GATEWAY.md §2) and validates it
// (see [Config.Validate]). Unknown keys, values of the wrong type, bad
// durations (Go syntax, e.g. 90s) and sizes (bytes, or KiB/MiB/GiB, e.g.
// 10MiB) are errors. The error is a [*ConfigError] naming every problem by
// its key path, e.g. `models[1].chain[0]: unknown upstream "anthropc"`.
// Environment variables named by key_env and api_key_env, and the files
// key_file and api_key_file name, are not read here.
func ParseConfig(data []byte) (Config, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return Config{}, &ConfigError{Problems: []Problem{{Message: "not valid YAML: " + yamlProblem(data, err)}}}
	}
	var c Config
	var ps problems
	if len(doc.Content) > 0 {
		d := decoder{ps: &ps}
		d.config(doc.Content[0], &c)
	}
	if len(ps) > 0 {
		// Structural problems first; validation adds what it finds.
		if err := c.Validate(); err != nil {
			ps = append(ps, err.(*ConfigError).Problems...)
		}
		return c, ps.err()
	}
	return c, c.Validate()
}

// decoder walks YAML nodes, recording problems by key path.
type decoder struct{ ps *problems }

func (d decoder) bad(path string, n *yaml.Node, format string, args ...any) {
	d.ps.add(path, format+" (line %d)", append(args, n.Line)...)
}

// fields walks a mapping, calling set for each known key; unknown keys are
// problems.
func (d decoder) fields(path string, n *yaml.Node, set map[string]func(p string, v *yaml.Node)) {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind != yaml.MappingNode {
		if !isNull(n) {
			d.bad(path, n, "must be a mapping")
		}
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		p := join(path, k.Value)
		f, ok := set[k.Value]
		switch {
		case !ok:
			d.bad(p, k, "unknown key")
		case seen[k.Value]:
			d.bad(p, k, "duplicate key")
		default:
			seen[k.Value] = true
			f(p, v)
		}
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

// seq walks a sequence, calling each with the element's path.
func (d decoder) seq(path string, n *yaml.Node, each func(p string, v *yaml.Node)) {
	if isNull(n) {
		return
	}
	if n.Kind != yaml.SequenceNode {
		d.bad(path, n, "must be a list")
		return
	}
	for i, v := range n.Content {
		each(fmt.Sprintf("%s[%d]", path, i), v)
	}
}

func (d decoder) scalar(path string, n *yaml.Node) (string, bool) {
	if n.Kind != yaml.ScalarNode || isNull(n) {
		d.bad(path, n, "must be a single value")
		return "", false
	}
	return n.Value, true
}

func (d decoder) str(dst *string) func(string, *yaml.Node) {
	return func(p string, n *yaml.Node) {
		if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
			*dst = n.Value
			return
		}
		if s, ok := d.scalar(p, n); ok {
			*dst = s
		}
	}
}

func (d decoder) int(dst *int) func(string, *yaml.Node) {
	return func(p string, n *yaml.Node) {
		s, ok := d.scalar(p, n)
		if !ok {
			return
		}
		v, err := strconv.Atoi(s)
		if err != nil {
			d.bad(p, n, "%q is not a whole number", s)
			return
		}
		*dst = v
	}
}

// positiveFloat reads a number that must be above zero.
func (d decoder) positiveFloat(dst *float64) func(string, *yaml.Node) {
	return func(p string, n *yaml.Node) {
		s, ok := d.scalar(p, n)
		if !ok {
			return
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !(v > 0) || v > 1e6 {
			d.bad(p, n, "%q is not a number above zero", s)
			return
		}
		*dst = v
	}
}

// count reads a whole number that must be at least 1 (a zero there cannot
// be meant: only an absent key takes the default).
func (d decoder) count(dst *int) func(string, *yaml.Node) {
	return d.intAs(dst, func(v int) (int, string) {
		if v < 1 {
			return 0, "must be at least 1 (omit the key for the default)"
		}
		return v, ""
	})
}

// zeroMeans reads a whole number that must not be negative; 0 is stored as
// zero (the Go field's "none", e.g. -1, since its zero value means the
// default).
func (d decoder) zeroMeans(dst *int, zero int, what string) func(string, *yaml.Node) {
	return d.intAs(dst, zeroAs(zero, what))
}

// zeroAs is the check of a number that must not be negative, whose 0 is
// stored as zero (what 0 means, for the problem's text).
func zeroAs[T ~int | ~int64](zero T, what string) func(T) (T, string) {
	return func(v T) (T, string) {
		switch {
		case v < 0:
			return 0, "must not be negative (0 means " + what + ")"
		case v == 0:
			return zero, ""
		}
		return v, ""
	}
}

// intAs reads a whole number and stores what conv makes of it.
func (d decoder) intAs(dst *int, conv func(int) (int, string)) func(string, *yaml.Node) {
	return readAs(d, d.int, dst, conv)
}

// positive reads a duration that must be above zero.
func (d decoder) positive(dst *time.Duration) func(string, *yaml.Node) {
	return d.durationAs(dst, func(v time.Duration) (time.Duration, string) {
		if v <= 0 {
			return 0, "must be above zero (omit the key for the default)"
		}
		return v, ""
	})
}

// zeroMeansDuration reads a duration that must not be negative; 0 is stored
// as zero (the Go field's "none", since its zero value means the default).
func (d decoder) zeroMeansDuration(dst *time.Duration, zero time.Duration, what string) func(string, *yaml.Node) {
	return d.durationAs(dst, zeroAs(zero, what))
}

// durationAs reads a duration and stores what conv makes of it.
func (d decoder) durationAs(dst *time.Duration, conv func(time.Duration) (time.Duration, string)) func(string, *yaml.Node) {
	return readAs(d, d.duration, dst, conv)
}

// readAs reads a value with read and stores what conv makes of it, or
// reports conv's problem at the key; a value read cannot parse is
// reported by read alone.
func readAs[T any](d decoder, read func(*T) func(string, *yaml.Node), dst *T, conv func(T) (T, string)) func(string, *yaml.Node) {
	return func(p string, n *yaml.Node) {
		var v T
		before := len(*d.ps)
		read(&v)(p, n)
		if len(*d.ps) > before {
			return
		}
		v, bad := conv(v)
		if bad != "" {
			d.bad(p, n, "%s", bad)
			return
		}
		*dst = v
	}
}

// positiveSize reads a size that must be above zero.
func (d decoder) positiveSize(dst *int64) func(string, *yaml.Node) {
	return readAs(d, d.size, dst, func(v int64) (int64, string) {
		if v <= 0 {
			return 0, "must be above zero (omit the key for the default)"
		}
		return v, ""
	})
}

// text reads a string that must not be empty.
func (d decoder) text(dst *string) func(string, *yaml.Node) {
	return readAs(d, d.str, dst, func(v string) (string, string) {
		if v == "" {
			return "", "must not be empty (omit the key for the default)"
		}
		return v, ""
	})
}

func (d decoder) boolean(dst *bool) func(string, *yaml.Node) {
	return func(p string, n *yaml.Node) {
		s, ok := d.scalar(p, n)
		if !ok {
			return
		}
		v, err := strconv.ParseBool(s)
		if err != nil || n.Tag != "!!bool" {
			d.bad(p, n, "%q is not true or false", s)
			return
		}
		*dst = v
	}
}

func (d decoder) duration(dst *time.Duration) func(string, *yaml.Node) {
	return func(p string, n *yaml.Node) {
		s, ok := d.scalar(p, n)
		if !ok {
			return
		}
		v, err := time.ParseDuration(s)
		if err != nil {
			d.bad(p, n, "%q is not a duration (e.g. 500ms, 30s, 5m)", s)
			return
		}
		*dst = v
	}
}

func (d decoder) size(dst *int64) func(string, *yaml.Node) {
	return func(p string, n *yaml.Node) {
		s, ok := d.scalar(p, n)
		if !ok {
			return
		}
		v, err := ParseSize(s)
		if err != nil {
			d.bad(p, n, "%v", err)
			return
		}
		*dst = v
	}
}

// ParseSize parses a size: a whole number of bytes, optionally followed by
// B, KiB, MiB or GiB (e.g. "10MiB", "512KiB", "1048576").
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	v, err := strconv.ParseInt(t, 10, 64)
	if err != nil || v < 0 || v > (1<<62)/mult {
		return 0, fmt.Errorf("%q is not a size (bytes, or a whole number with KiB, MiB or GiB, e.g. 10MiB)", s)
	}
	return v * mult, nil
}
