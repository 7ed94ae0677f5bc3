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

// demoFlags holds the values of `loopctl demo`'s flags once parsed.
type demoFlags struct {
	baseURL, model, fallbacks, apiKey *string
	timeout                           *time.Duration
	noColor                           *bool
}

// defineDemoFlags declares the demo command's flags on fs.
func defineDemoFlags(fs *flag.FlagSet) demoFlags {
	return demoFlags{
		baseURL:   fs.String("base-url", "", "run against this OpenAI-compatible API root (e.g. http://localhost:8000/v1) instead of the scripted in-process server"),
		model:     fs.String("model", "", "primary `model` at --base-url (required with it)"),
		fallbacks: fs.String("fallback", "", "fallback chain at --base-url: comma-separated `models`, in order"),
		apiKey:    fs.String("api-key", "", "API `key` for --base-url (default $OPENAI_API_KEY)"),
		timeout:   fs.Duration("request-timeout", time.Minute, "bound on each model request (0: none)"),
		noColor:   fs.Bool("no-color", false, "plain lines: no colour and no spinner, even on a terminal"),
	}
}

// runDemo is `loopctl demo`: it parses and checks the flags, then plays the
// story (or talks to --base-url) through demo.Run.
func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := NewFlagSet("demo")
	f := defineDemoFlags(fs)
	if code, done := ParseFlags(fs, demoUsage, args, stdout, stderr); done {
		return code
	}

	cfg := demoBase()
	if msg := f.validate(fs); msg != "" {
		return UsageError(stderr, fs.Name(), msg)
	}
	if *f.baseURL != "" {
		if msg := f.applyRemote(&cfg); msg != "" {
			return UsageError(stderr, fs.Name(), msg)
		}
	}
	cfg.RequestTimeout = *f.timeout
	cfg.Out = stdout
	if !*f.noColor && isTerminal(stdout) && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb" {
		cfg.Color, cfg.Spinner = true, true
	}
	_, err := demo.Run(ctx, cfg)
	return demoExit(err, fs.Name(), stderr)
}

// validate checks the flags that do not depend on --base-url's value: a
// negative --request-timeout, and the remote-only flags given without
// --base-url. It returns the usage error's message, or "".
func (f demoFlags) validate(fs *flag.FlagSet) string {
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	switch {
	case *f.timeout < 0:
		return fmt.Sprintf("--request-timeout must not be negative (got %v)", *f.timeout)
	case *f.baseURL == "" && (set["model"] || set["fallback"] || set["api-key"]):
		name := "model"
		if !set["model"] {
			name = "fallback"
			if !set["fallback"] {
				name = "api-key"
			}
		}
		return "--" + name + " needs --base-url (the scripted story uses its own models)"
	}
	return ""
}

// applyRemote checks --base-url, --model and --fallback and points cfg at
// the remote server with them and the API key. It returns the usage error's
// message, or "".
func (f demoFlags) applyRemote(cfg *demo.Config) string {
	if u, err := url.Parse(*f.baseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Sprintf("--base-url must be an http:// or https:// URL (got %q)", *f.baseURL)
	}
	model := strings.TrimSpace(*f.model)
	if model == "" {
		return "--model is required with --base-url"
	}
	if *f.fallbacks != "" {
		chain, msg := appendFallbacks(cfg.Fallback, *f.fallbacks, model)
		if msg != "" {
			return msg
		}
		cfg.Fallback = chain
	}
	key := *f.apiKey
	if key == "" {
		key = os.Getenv("OPENAI_API_KEY")
	}
	cfg.BaseURL, cfg.Model, cfg.APIKey = *f.baseURL, model, key
	return ""
}

// appendFallbacks appends the comma-separated models of list to chain,
// refusing an empty name, the primary model and a name already on the chain.
// It returns the chain, or the usage error's message.
func appendFallbacks(chain []string, list, primary string) ([]string, string) {
	for i, m := range strings.Split(list, ",") {
		m = strings.TrimSpace(m)
		switch {
		case m == "":
			return nil, fmt.Sprintf("--fallback has an empty model name (entry %d of %q)", i+1, list)
		case m == primary:
			return nil, fmt.Sprintf("--fallback names the primary model %q", m)
		case slices.Contains(chain, m):
			return nil, fmt.Sprintf("--fallback names %q twice", m)
		}
		chain = append(chain, m)
	}
	return chain, ""
}

// demoExit maps demo.Run's error to the exit code, printing it on stderr: a
// configuration error is a usage error, any other a failure.
func demoExit(err error, name string, stderr io.Writer) int {
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, demo.ErrConfig):
		return UsageError(stderr, name, flatten(err))
	default:
		fmt.Fprintf(stderr, "%s: %s\n", name, flatten(err))
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
