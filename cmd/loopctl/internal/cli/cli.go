package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"text/tabwriter"
)

// Exit codes returned by [Main], [Run] and every command.
const (
	ExitOK      = 0 // success, or help that was asked for
	ExitFailure = 1 // the command ran and failed (e.g. a file could not be written)
	ExitUsage   = 2 // unknown command, bad flag or value, missing arguments
)

// Command is one loopctl subcommand.
type Command struct {
	Name    string // what the user types, e.g. "simulate"
	Summary string // one line for the usage listing
	// Run executes the command with the arguments after its name and returns an exit
	// code. It writes results to stdout and diagnostics to stderr.
	Run func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

// Main runs loopctl with args (without the program name) and returns the exit code.
// An interrupt (Ctrl-C) cancels the context the command runs with.
func Main(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return Run(ctx, args, stdout, stderr)
}

// Run dispatches args to a command. With no arguments it prints the usage on stderr
// and returns [ExitUsage]; with -h, --help or help it prints the usage on stdout and
// returns [ExitOK]; "help CMD" shows the help of CMD.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		writeUsage(stderr)
		return ExitUsage
	}
	name, rest := args[0], args[1:]
	switch name {
	case "-h", "-help", "--help":
		writeUsage(stdout)
		return ExitOK
	case "help":
		if len(rest) == 0 {
			writeUsage(stdout)
			return ExitOK
		}
		cmd, ok := lookup(rest[0])
		if !ok {
			return unknown(stderr, rest[0])
		}
		return cmd.Run(ctx, []string{"--help"}, stdout, stderr)
	}
	cmd, ok := lookup(name)
	if !ok {
		return unknown(stderr, name)
	}
	return cmd.Run(ctx, rest, stdout, stderr)
}

func lookup(name string) (Command, bool) {
	for _, c := range commands {
		if c.Name == name {
			return c, true
		}
	}
	return Command{}, false
}

func unknown(stderr io.Writer, name string) int {
	if strings.HasPrefix(name, "-") {
		fmt.Fprintf(stderr, "loopctl: unknown flag %q (flags go after the command; see 'loopctl --help')\n", name)
	} else {
		fmt.Fprintf(stderr, "loopctl: unknown command %q (see 'loopctl --help')\n", name)
	}
	return ExitUsage
}

func writeUsage(w io.Writer) {
	fmt.Fprint(w, "loopctl keeps LLM agents working when the things they call break.\n\n"+
		"usage: loopctl <command> [flags]\n\ncommands:\n")
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	for _, c := range commands {
		fmt.Fprintf(tw, "  %s\t%s\n", c.Name, c.Summary)
	}
	tw.Flush()
	fmt.Fprint(w, "\nRun 'loopctl <command> --help' for the flags of a command.\n")
}
