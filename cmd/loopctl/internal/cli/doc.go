// Package cli is the loopctl command line: command dispatch, flag parsing, help and
// exit codes. cmd/loopctl only calls [Main].
//
// A command is one entry of the commands table (see commands.go): a name, a one-line
// summary and a run function that receives the arguments after its name. Every
// command parses its flags with a [flag.FlagSet] built by [NewFlagSet] and [ParseFlags],
// which give every command the same behaviour: --help prints the flags with their
// defaults on stdout and exits 0; an unknown flag, a bad value or a stray argument
// prints one line naming it on stderr and exits 2.
package cli
