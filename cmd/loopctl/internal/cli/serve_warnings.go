package cli

import (
	"fmt"
	"io"

	"github.com/loopctl/loopctl-go/gateway"
)

// configWarnings prints what is suspicious in a valid config but no error
// (gateway.Config.Warnings: a pool no model names), one line each.
func configWarnings(stderr io.Writer, path string, cfg gateway.Config) {
	if path == "" {
		path = "flags"
	}
	for _, w := range cfg.Warnings() {
		fmt.Fprintf(stderr, "loopctl serve: %s: warning: %s\n", path, w.Error())
	}
}
