package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeLoopctl writes a shell script that answers `serve --check --config F`
// as a loopctl would: exit 2 with "<key path>: unknown key" for every key of
// unknown found in F, else OK.
func fakeLoopctl(t *testing.T, unknown ...string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("#!/bin/sh\nf=$4\nbad=0\n")
	for _, k := range unknown {
		b.WriteString("if grep -q '" + k + ":' \"$f\"; then echo 'models[0].breaker." + k + ": unknown key'; bad=1; fi\n")
	}
	b.WriteString("if [ $bad = 1 ]; then exit 2; fi\necho OK\n")
	path := filepath.Join(t.TempDir(), "loopctl")
	if err := os.WriteFile(path, []byte(b.String()), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSettle: the rev 4 keys are kept by a loopctl that accepts them, dropped
// with a note by one that rejects them (-rev4 auto), an error with -rev4 on;
// hedge_after is dropped on its own.
func TestSettle(t *testing.T) {
	p := pair{&upstream{addr: "127.0.0.1:1"}, &upstream{addr: "127.0.0.1:2"}}
	ctx := context.Background()
	tests := []struct {
		name    string
		unknown []string
		c       runConfig
		rev4    string
		keep    bool // the rev 4 keys are kept
		hedge   bool // hedge_after is kept
		note    string
		wantErr bool
	}{
		{"accepted", nil, brownoutKind.runConfig(), "auto", true, false, "", false},
		{"rejected", []string{"failure_rate", "rate_window"}, brownoutKind.runConfig(), "auto", false, false, "this loopctl rejects breaker.failure_rate, breaker.rate_window, breaker.rate_min_calls, breaker.slow_call_after, breaker.slow_call_rate (models[0].breaker.failure_rate: unknown key): run without", false},
		{"rejected, on", []string{"slow_call_after"}, slowKind.runConfig(), "on", false, false, "", true},
		{"hedge only", []string{"hedge_after"}, runConfig{hedge: true, breaker: []string{"failure_rate: 0.25"}}, "auto", true, false, "this loopctl rejects hedge_after (models[0].breaker.hedge_after: unknown key): run without", false},
	}
	for _, tt := range tests {
		bin := fakeLoopctl(t, tt.unknown...)
		path := filepath.Join(t.TempDir(), "c.yaml")
		c, notes, problems, err := settle(ctx, bin, path, "127.0.0.1:3", p, tt.c, options{rev4: tt.rev4})
		if (err != nil) != tt.wantErr {
			t.Errorf("%s: err %v", tt.name, err)
			continue
		}
		if tt.wantErr {
			continue
		}
		if problems != "" || c.rev4() != tt.keep || c.hedge != tt.hedge || strings.Join(notes, "; ") != tt.note {
			t.Errorf("%s: config %+v, notes %q, problems %q", tt.name, c, notes, problems)
		}
		written, _ := os.ReadFile(path)
		if strings.Contains(string(written), "rate") != tt.keep {
			t.Errorf("%s: the checked config:\n%s", tt.name, written)
		}
	}
}
