package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// checkImageVersion: `loopctl version` in the image (run: the command line
// that runs /loopctl in it) names the commit the binary was built from,
// not only "(devel)".
func checkImageVersion(t *testing.T, run []string) {
	t.Helper()
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatalf("git rev-parse HEAD: %v (the test runs in a git checkout)", err)
	}
	out, err := exec.Command(run[0], append(run[1:], "version")...).CombinedOutput()
	if err != nil {
		t.Fatalf("loopctl version in the image: %v\n%s", err, out)
	}
	if want := "\ncommit  " + strings.TrimSpace(string(head)); !strings.Contains(string(out), want) {
		t.Fatalf("loopctl version in the image:\n%s\nwant a line %q", out, strings.TrimSpace(want))
	}
}

// checkImageConfig: `loopctl serve --check` in the image passes the
// config the image's CMD names, put where the CMD looks for it, and fails
// (exit 2, naming the key) on a bad one.
func checkImageConfig(t *testing.T, root, ctr string, run []string) {
	t.Helper()
	dir := t.TempDir()
	for name, text := range map[string]string{
		"good.yaml": "upstreams:\n  - {name: up, api: openai, base_url: \"http://127.0.0.1:9/v1\", api_key_file: /etc/loopctl/up.key}\nmodels:\n  - {name: smart, primary: up/a}\n",
		"bad.yaml":  "models:\n  - {name: smart, primary: nowhere/a}\n",
		"up.key":    "sk-test\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		buildah(t, root, "copy", ctr, filepath.Join(dir, name), "/etc/loopctl/"+name)
	}
	check := func(name string) (int, string) {
		cmd := exec.Command(run[0], append(run[1:], "serve", "--check", "--config", "/etc/loopctl/"+name)...)
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), string(out)
		} else if err != nil {
			t.Fatalf("serve --check in the image: %v", err)
		}
		return 0, string(out)
	}
	if code, out := check("good.yaml"); code != 0 {
		t.Fatalf("serve --check of a good config in the image: exit %d\n%s", code, out)
	}
	// buildah run (chroot isolation) at times loses the output of a
	// process that exits at once: the exit code is kept; the words are
	// asked for again, a few times.
	code, out := check("bad.yaml")
	for try := 1; try < 5 && code == ExitUsage && !strings.Contains(out, "loopctl serve"); try++ {
		code, out = check("bad.yaml")
	}
	if code != ExitUsage || !strings.Contains(out, "nowhere") {
		t.Fatalf("serve --check of a bad config in the image: exit %d\n%s", code, out)
	}
}

// checkSourceStages: buildah reads the default build (`buildah bud -t
// loopctl .`) as the Dockerfile means it: its first step is to pull the
// golang image (which this machine cannot: --pull=never stops there),
// never a stage name taken for an image ("short-name \"build\" did not
// resolve to an alias", buildah 1.28 on `FROM ${BINARY}`).
func checkSourceStages(t *testing.T, root, ctx string) {
	t.Helper()
	args := []string{"--root", filepath.Join(root, "storage"), "--runroot", filepath.Join(root, "run"), "--storage-driver", "vfs",
		"bud", "--pull=never", "-t", "loopctl-source", ctx}
	out, err := exec.Command("buildah", args...).CombinedOutput()
	if err == nil {
		return // the golang image is here: it built
	}
	if !strings.Contains(string(out), "golang:1.26") || strings.Contains(string(out), "short-name") {
		t.Fatalf("buildah bud of the default stages:\n%s", out)
	}
}
