package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// run calls Run with buffers and returns the exit code, stdout and stderr.
func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// oneLine fails unless s is exactly one line containing every word in want.
func oneLine(t *testing.T, s string, want ...string) {
	t.Helper()
	if strings.Count(s, "\n") != 1 || !strings.HasSuffix(s, "\n") {
		t.Errorf("stderr is not one line: %q", s)
	}
	for _, w := range want {
		if !strings.Contains(s, w) {
			t.Errorf("stderr %q does not mention %q", s, w)
		}
	}
}

func TestUsage(t *testing.T) {
	tests := []struct {
		args     []string
		code     int
		toStdout bool
	}{
		{nil, ExitUsage, false},
		{[]string{"-h"}, ExitOK, true},
		{[]string{"--help"}, ExitOK, true},
		{[]string{"-help"}, ExitOK, true},
		{[]string{"help"}, ExitOK, true},
	}
	for _, tt := range tests {
		code, out, errs := run(t, tt.args...)
		if code != tt.code {
			t.Errorf("%q: exit %d, want %d", tt.args, code, tt.code)
		}
		usage := errs
		if tt.toStdout {
			usage = out
			if errs != "" {
				t.Errorf("%q: stderr %q", tt.args, errs)
			}
		} else if out != "" {
			t.Errorf("%q: stdout %q", tt.args, out)
		}
		if !strings.Contains(usage, "usage: loopctl <command>") {
			t.Errorf("%q: no usage in %q", tt.args, usage)
		}
		for _, c := range commands {
			if !strings.Contains(usage, c.Name) || !strings.Contains(usage, c.Summary) {
				t.Errorf("%q: usage does not list %s", tt.args, c.Name)
			}
		}
	}
}

func TestUnknown(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"help", "frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"--callers=3"}, `unknown flag "--callers=3"`},
	}
	for _, tt := range tests {
		code, out, errs := run(t, tt.args...)
		if code != ExitUsage || out != "" {
			t.Errorf("%q: exit %d, stdout %q; want 2 and nothing", tt.args, code, out)
		}
		oneLine(t, errs, tt.want)
	}
}

func TestCommandsTable(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range commands {
		if c.Name == "" || c.Summary == "" || c.Run == nil || strings.Contains(c.Summary, "\n") {
			t.Errorf("incomplete command %+v", c)
		}
		if seen[c.Name] || c.Name == "help" || strings.HasPrefix(c.Name, "-") {
			t.Errorf("command name %q is taken", c.Name)
		}
		seen[c.Name] = true
		// Every command answers --help with its flags on stdout and exit 0.
		code, out, errs := run(t, c.Name, "--help")
		if code != ExitOK || errs != "" || !strings.Contains(out, "usage: loopctl "+c.Name) {
			t.Errorf("%s --help: exit %d, stdout %q, stderr %q", c.Name, code, out, errs)
		}
		code2, out2, _ := run(t, "help", c.Name)
		if code2 != code || out2 != out {
			t.Errorf("help %s differs from %s --help", c.Name, c.Name)
		}
		// And rejects an unknown flag with one line naming it.
		code, _, errs = run(t, c.Name, "--no-such-flag")
		if code != ExitUsage {
			t.Errorf("%s --no-such-flag: exit %d", c.Name, code)
		}
		oneLine(t, errs, "no-such-flag")
	}
}
