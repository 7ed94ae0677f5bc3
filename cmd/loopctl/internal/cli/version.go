package cli

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
)

const versionUsage = `usage: loopctl version

Prints loopctl's version (the module version it was built from, "(devel)" for a build
from a work tree), the commit and its time when the build recorded them, and the Go
version that built it.`

// version and commit, when not empty, are the version and commit the
// build named with -ldflags "-X …/cli.version=v1.2.3 -X …/cli.commit=SHA"
// (the Dockerfile's VERSION and COMMIT): a build from a context without
// .git has no VCS stamp of its own. They win over the build information.
var version, commit string

// runVersion prints the build's version information.
func runVersion(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := NewFlagSet("version")
	if code, done := ParseFlags(fs, versionUsage, args, stdout, stderr); done {
		return code
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		fmt.Fprintln(stderr, "loopctl version: the binary carries no build information")
		return ExitFailure
	}
	fmt.Fprint(stdout, versionText(bi))
	return ExitOK
}

// versionText formats bi as "loopctl <version>" followed by the commit (with
// "+dirty" when the work tree had changes), its time, and the Go version.
func versionText(bi *debug.BuildInfo) string {
	v := bi.Main.Version
	if version != "" {
		v = version
	}
	if v == "" {
		v = "(devel)"
	}
	var rev, at, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if commit != "" {
		rev, dirty = commit, ""
	}
	out := "loopctl " + v + "\n"
	if rev != "" {
		out += "commit  " + rev + dirty + "\n"
	}
	if at != "" {
		out += "built   " + at + "\n"
	}
	return out + "go      " + bi.GoVersion + "\n"
}
