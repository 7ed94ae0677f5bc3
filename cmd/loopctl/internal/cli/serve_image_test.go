package cli

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// imageUID is the image's user (the Dockerfile's USER).
const imageUID = 65532

// healthcheck runs `loopctl healthcheck --url url` (through run, which
// prefixes the command line) and returns its exit code and duration.
func healthcheck(t *testing.T, run []string, url string) (int, time.Duration) {
	t.Helper()
	args := append(append([]string{}, run...), "healthcheck", "--url", url)
	cmd := exec.Command(args[0], args[1:]...)
	t0 := time.Now()
	err := cmd.Run()
	took := time.Since(t0)
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), took
	} else if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return 0, took
}

// freeAddr returns a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestServeAsImageUser: the static binary the image holds runs as uid
// 65532 with HOME unset, in a read-only working directory with only /tmp
// writable; /readyz answers and `loopctl healthcheck` exits 0 while it
// serves, and 1 within 2 s when the server is down or does not answer.
func TestServeAsImageUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("running loopctl as uid 65532 needs root (test.sh runs as root)")
	}
	bin := loopctlBinary(t)
	ro, err := os.MkdirTemp("", "loopctl-ro-") // in /tmp, which 65532 may enter
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(ro)
	if err := os.Chmod(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	p := startLoopctl(t, func(c *exec.Cmd) {
		c.Dir, c.Env = ro, []string{"PATH=/usr/bin:/bin", "TMPDIR=/tmp"}
		c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: imageUID, Gid: imageUID}}
	}, "serve", "--listen", "127.0.0.1:0")
	status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if !strings.Contains(string(status), fmt.Sprintf("\nUid:\t%d\t", imageUID)) {
		t.Fatalf("not running as %d:\n%s", imageUID, status)
	}
	if code, body := p.request("POST", "/v1/chat/completions", "", chatReq("demo")); code != 200 {
		t.Fatalf("demo request as uid %d: %d %s", imageUID, code, body)
	}
	url := "http://" + p.addr + "/readyz"
	if code, _ := healthcheck(t, []string{bin}, url); code != 0 {
		t.Fatalf("healthcheck while serving: exit %d", code)
	}
	p.signal(syscall.SIGTERM)
	if code := p.wait(5 * time.Second); code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	if code, took := healthcheck(t, []string{bin}, url); code != 1 || took > 2*time.Second {
		t.Fatalf("healthcheck with the server down: exit %d after %v, want 1 within 2s", code, took)
	}
	mute, err := net.Listen("tcp", "127.0.0.1:0") // accepts, never answers
	if err != nil {
		t.Fatal(err)
	}
	defer mute.Close()
	if code, took := healthcheck(t, []string{bin}, "http://"+mute.Addr().String()+"/readyz"); code != 1 || took > 2500*time.Millisecond {
		t.Fatalf("healthcheck against a server that does not answer: exit %d after %v, want 1 within 2s", code, took)
	}
}

// buildah runs buildah with its own storage under root and returns its
// output.
func buildah(t *testing.T, root string, args ...string) string {
	t.Helper()
	full := append([]string{"--root", filepath.Join(root, "storage"), "--runroot", filepath.Join(root, "run"), "--storage-driver", "vfs"}, args...)
	out, err := exec.Command("buildah", full...).CombinedOutput()
	if err != nil {
		t.Fatalf("buildah %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestImageBuildah: the Dockerfile builds with buildah (its final stage from
// a binary built on the host: base images cannot be pulled here), the image
// says user 65532, an exec-form HEALTHCHECK and loopctl as its entrypoint,
// and loopctl runs in it as 65532: the image's own `loopctl healthcheck`
// exits 0 while it serves and 1 once it is down.
func TestImageBuildah(t *testing.T) {
	if _, err := exec.LookPath("buildah"); err != nil {
		t.Fatal("buildah not found: install it (Debian: apt-get install -y buildah); test.sh does")
	}
	if os.Geteuid() != 0 {
		t.Skip("buildah needs root here (test.sh runs as root)")
	}
	root, ctx := t.TempDir(), t.TempDir()
	for src, dst := range map[string]string{loopctlBinary(t): "loopctl", "../../../../Dockerfile": "Dockerfile", "/etc/ssl/certs/ca-certificates.crt": "ca-certificates.crt"} {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatalf("%v (the CA certificates: apt-get install -y ca-certificates)", err)
		}
		if err := os.WriteFile(filepath.Join(ctx, dst), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	buildah(t, root, "bud", "--format", "docker", "--target", "host", "-t", "loopctl-test", ctx)
	checkSourceStages(t, root, ctx)
	var image struct {
		Docker struct {
			Config struct {
				User        string
				Entrypoint  []string
				Healthcheck struct{ Test []string }
			} `json:"config"`
		}
	}
	if err := json.Unmarshal([]byte(buildah(t, root, "inspect", "--type", "image", "loopctl-test")), &image); err != nil {
		t.Fatal(err)
	}
	cfg := image.Docker.Config
	if cfg.User != "65532:65532" || strings.Join(cfg.Entrypoint, " ") != "/loopctl" || strings.Join(cfg.Healthcheck.Test, " ") != "CMD /loopctl healthcheck" {
		t.Fatalf("image config %+v", cfg)
	}
	ctr := strings.TrimSpace(buildah(t, root, "from", "loopctl-test"))
	defer buildah(t, root, "rm", ctr)
	run := []string{"buildah", "--root", filepath.Join(root, "storage"), "--runroot", filepath.Join(root, "run"), "--storage-driver", "vfs",
		"run", "--isolation", "chroot", "--network", "host", "--user", "65532:65532", ctr, "--", "/loopctl"}
	checkImageVersion(t, run)
	checkImageConfig(t, root, ctr, run)
	addr := freeAddr(t)
	srv := exec.Command(run[0], append(run[1:], "serve", "--listen", addr)...)
	srv.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	stop := func() { _ = syscall.Kill(-srv.Process.Pid, syscall.SIGKILL); _ = srv.Wait() }
	defer stop()
	for deadline := time.Now().Add(20 * time.Second); readyz(addr) != http.StatusOK; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("loopctl in the image: /readyz not 200 within 20s")
		}
	}
	if code, _ := healthcheck(t, run, "http://"+addr+"/readyz"); code != 0 {
		t.Fatalf("the image's healthcheck while serving: exit %d", code)
	}
	stop()
	if code, _ := healthcheck(t, run, "http://"+addr+"/readyz"); code != 1 {
		t.Fatalf("the image's healthcheck with the server down: exit %d", code)
	}
}
