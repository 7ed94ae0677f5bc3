package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// NewFlagSet returns a flag set for the command name that reports errors instead of
// exiting and prints nothing by itself; pass it to [ParseFlags].
func NewFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("loopctl "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// ParseFlags parses args with fs. On --help it prints usage (a "usage: ..." line and
// description, then the flags with their defaults) on stdout. On an unknown flag, a
// bad value, or a positional argument (commands that take none) it prints one line
// naming it on stderr. It returns done=true with the exit code to return when the
// command must stop: ExitOK after help, ExitUsage after an error.
func ParseFlags(fs *flag.FlagSet, usage string, args []string, stdout, stderr io.Writer) (code int, done bool) {
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintf(stdout, "%s\n\nflags:\n", usage)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
		return ExitOK, true
	case err != nil:
		return UsageError(stderr, fs.Name(), err.Error()), true
	case fs.NArg() > 0:
		return UsageError(stderr, fs.Name(), fmt.Sprintf("unexpected argument %q", fs.Arg(0))), true
	}
	return ExitOK, false
}

// UsageError prints "<cmd>: <msg> (see '<cmd> --help')" on stderr and returns ExitUsage.
func UsageError(stderr io.Writer, cmd, msg string) int {
	fmt.Fprintf(stderr, "%s: %s (see '%s --help')\n", cmd, msg, cmd)
	return ExitUsage
}
