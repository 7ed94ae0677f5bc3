package cli

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionText(t *testing.T) {
	tests := []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"release", debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v0.3.0"}},
			"loopctl v0.3.0\ngo      go1.26.0\n"},
		{"work tree", debug.BuildInfo{GoVersion: "go1.26.0", Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.time", Value: "2026-11-30T17:00:00Z"},
			{Key: "vcs.modified", Value: "true"}}},
			"loopctl (devel)\ncommit  abc123+dirty\nbuilt   2026-11-30T17:00:00Z\ngo      go1.26.0\n"},
		{"clean", debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "false"}}},
			"loopctl (devel)\ncommit  abc123\ngo      go1.26.0\n"},
	}
	for _, tt := range tests {
		if got := versionText(&tt.bi); got != tt.want {
			t.Errorf("%s: got\n%s\nwant\n%s", tt.name, got, tt.want)
		}
	}
}

func TestVersionCommand(t *testing.T) {
	code, out, errs := run(t, "version")
	if code != ExitOK || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if !strings.HasPrefix(out, "loopctl ") || !strings.Contains(out, "\ngo      go1.") {
		t.Errorf("output %q", out)
	}
	if code, _, errs := run(t, "version", "extra"); code != ExitUsage || !strings.Contains(errs, "unexpected argument") {
		t.Errorf("version extra: exit %d, stderr %q", code, errs)
	}
}
