package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/loopctl/loopctl-go/cmd/loopctl/internal/demo"
)

const demoUsage = `usage: loopctl demo [flags]

Shows what the breakers do, in under twenty seconds, with no network and no API key.
Starts a scripted model server inside the process (loopback, OpenAI Chat Completions
wire format: gpt-primary and the fallback chain gpt-backup-1, gpt-backup-2) and three
tools (search, which turns flaky, its backup search_backup, and calculator), then runs
real agent runs through package agent and provider/openai while the server and the
tools break and recover on cue: the model breaker trips to its chain and recovers; the
search tool trips, its failed probe falls through to search_backup within the same
call, and a later probe closes it while search_backup is still healthy. Every turn, tool call and breaker transition is printed
with the elapsed time, then a summary of models, tools and transitions. The command
fails (exit 1) if a scripted transition did not happen.

With --base-url the same agent (same tools, same prompts) talks to a real
OpenAI-compatible server instead, with no scripted faults.

Colour and a spinner are used when stdout is a terminal (unless --no-color or NO_COLOR).`

// demoBase returns the demo.Config every run starts from. Tests replace it to
// play the story on a fake clock.
var demoBase = func() demo.Config { return demo.Config{} }

func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := NewFlagSet("demo")
	baseURL := fs.String("base-url", "", "run against this OpenAI-compatible API root (e.g. http://localhost:8000/v1) instead of the scripted in-process server")
	model := fs.String("model", "", "primary `model` at --base-url (required with it)")
	fallbacks := fs.String("fallback", "", "fallback chain at --base-url: comma-separated `models`, in order")
	apiKey := fs.String("api-key", "", "API `key` for --base-url (default $OPENAI_API_KEY)")
	timeout := fs.Duration("request-timeout", time.Minute, "bound on each model request (0: none)")
	noColor := fs.Bool("no-color", false, "plain lines: no colour and no spinner, even on a terminal")
	if code, done := ParseFlags(fs, demoUsage, args, stdout, stderr); done {
		return code
	}

	cfg := demoBase()
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case *timeout < 0:
		return UsageError(stderr, fs.Name(), fmt.Sprintf("--request-timeout must not be negative (got %v)", *timeout))
	case *baseURL == "" && (set["model"] || set["fallback"] || set["api-key"]):
		name := "model"
		if !set["model"] {
			name = "fallback"
			if !set["fallback"] {
				name = "api-key"
			}
		}
		return UsageError(stderr, fs.Name(), "--"+name+" needs --base-url (the scripted story uses its own models)")
	}
	if *baseURL != "" {
		if u, err := url.Parse(*baseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return UsageError(stderr, fs.Name(), fmt.Sprintf("--base-url must be an http:// or https:// URL (got %q)", *baseURL))
		}
		if strings.TrimSpace(*model) == "" {
			return UsageError(stderr, fs.Name(), "--model is required with --base-url")
		}
		if *fallbacks != "" {
			for i, m := range strings.Split(*fallbacks, ",") {
				m = strings.TrimSpace(m)
				switch {
				case m == "":
					return UsageError(stderr, fs.Name(), fmt.Sprintf("--fallback has an empty model name (entry %d of %q)", i+1, *fallbacks))
				case m == strings.TrimSpace(*model):
					return UsageError(stderr, fs.Name(), fmt.Sprintf("--fallback names the primary model %q", m))
				case slices.Contains(cfg.Fallback, m):
					return UsageError(stderr, fs.Name(), fmt.Sprintf("--fallback names %q twice", m))
				}
				cfg.Fallback = append(cfg.Fallback, m)
			}
		}
		key := *apiKey
		if key == "" {
			key = os.Getenv("OPENAI_API_KEY")
		}
		cfg.BaseURL, cfg.Model, cfg.APIKey = *baseURL, strings.TrimSpace(*model), key
	}
	cfg.RequestTimeout = *timeout
	cfg.Out = stdout
	if !*noColor && isTerminal(stdout) && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb" {
		cfg.Color, cfg.Spinner = true, true
	}

	_, err := demo.Run(ctx, cfg)
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, demo.ErrConfig):
		return UsageError(stderr, fs.Name(), flatten(err))
	default:
		fmt.Fprintf(stderr, "%s: %s\n", fs.Name(), flatten(err))
		return ExitFailure
	}
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// flatten returns err's message on one line, without the "demo: " prefix
// (the line already starts with the command's name).
func flatten(err error) string {
	lines := strings.Split(err.Error(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(strings.TrimSpace(l), "demo: ")
	}
	return strings.Join(lines, "; ")
}
