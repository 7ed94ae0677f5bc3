// Command loopctl is the loopctl command line; see package cmd/loopctl/internal/cli.
package main

import (
	"os"

	"github.com/loopctl/loopctl-go/cmd/loopctl/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr)) }
