package cli

import (
	"bufio"
	"runtime/debug"
	"strings"
	"testing"
)

// dockerStages returns the Dockerfile's stages: each one's lines, without
// comments, blank lines and continuation breaks, in order.
func dockerStages(t *testing.T) [][]string {
	t.Helper()
	var stages [][]string
	text := strings.ReplaceAll(readFile(t, "../Dockerfile"), "\\\n", " ")
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := strings.Join(strings.Fields(sc.Text()), " ")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "FROM ") {
			stages = append(stages, nil)
		}
		if len(stages) > 0 {
			stages[len(stages)-1] = append(stages[len(stages)-1], line)
		}
	}
	return stages
}

// TestDockerfileStages: no stage is chosen by an ARG in FROM (buildah 1.28
// takes `FROM ${BINARY}` for an image name: `buildah bud -t loopctl .`
// failed); the host stage (--target host) and the final stage are the
// same image but for where the binary comes from; the source build is
// static, -trimpath, -s -w, and names VERSION and COMMIT with -X.
func TestDockerfileStages(t *testing.T) {
	stages := dockerStages(t)
	byName := map[string][]string{}
	for _, s := range stages {
		if strings.Contains(s[0], "$") {
			t.Errorf("%q: a stage chosen by an ARG", s[0])
		}
		for _, l := range s {
			if strings.HasPrefix(l, "COPY --from=$") {
				t.Errorf("%q: a stage chosen by an ARG", l)
			}
		}
		if f := strings.Fields(s[0]); len(f) == 4 && f[2] == "AS" {
			byName[f[3]] = s
		}
	}
	host, final := byName["host"], stages[len(stages)-1]
	if host == nil || final[0] != "FROM scratch" || host[0] != "FROM scratch AS host" {
		t.Fatalf("want a stage host and a final stage FROM scratch: %q", stages)
	}
	noCopy := func(s []string) string {
		var keep []string
		for _, l := range s[1:] {
			if !strings.HasPrefix(l, "COPY ") {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	if noCopy(host) != noCopy(final) {
		t.Errorf("the host stage and the final stage differ:\n%s\n---\n%s", noCopy(host), noCopy(final))
	}
	build := strings.Join(byName["build"], "\n")
	for _, want := range []string{"CGO_ENABLED=0 go build -trimpath", `-ldflags="-s -w `,
		"-X github.com/loopctl/loopctl-go/cmd/loopctl/internal/cli.version=${VERSION}",
		"-X github.com/loopctl/loopctl-go/cmd/loopctl/internal/cli.commit=${COMMIT}", "ARG VERSION", "ARG COMMIT"} {
		if !strings.Contains(build, want) {
			t.Errorf("the build stage lacks %q:\n%s", want, build)
		}
	}
}

// TestVersionFromLinker: a version and commit named with -ldflags -X win
// over the build information (a build context without .git has none).
func TestVersionFromLinker(t *testing.T) {
	version, commit = "v0.4.0", "0123abcd"
	defer func() { version, commit = "", "" }()
	bi := debug.BuildInfo{GoVersion: "go1.26.0", Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "ffff"}, {Key: "vcs.modified", Value: "true"}}}
	if got, want := versionText(&bi), "loopctl v0.4.0\ncommit  0123abcd\ngo      go1.26.0\n"; got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}
