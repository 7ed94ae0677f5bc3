package cli

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// deployDir is the repository's deploy/ folder.
const deployDir = "../../../../deploy"

// k8sProbe is what TestDeployManifests reads of a probe.
type k8sProbe struct {
	HTTPGet *struct {
		Path string `yaml:"path"`
		Port int    `yaml:"port"`
	} `yaml:"httpGet"`
}

// k8sContainer is what TestDeployManifests reads of a container.
type k8sContainer struct {
	Name  string   `yaml:"name"`
	Image string   `yaml:"image"`
	Args  []string `yaml:"args"`
	Ports []struct {
		ContainerPort int `yaml:"containerPort"`
	} `yaml:"ports"`
	ReadinessProbe *k8sProbe `yaml:"readinessProbe"`
	LivenessProbe  *k8sProbe `yaml:"livenessProbe"`
	Lifecycle      struct {
		PreStop struct {
			Sleep struct {
				Seconds int `yaml:"seconds"`
			} `yaml:"sleep"`
		} `yaml:"preStop"`
	} `yaml:"lifecycle"`
	SecurityContext struct {
		ReadOnlyRootFilesystem   bool `yaml:"readOnlyRootFilesystem"`
		AllowPrivilegeEscalation bool `yaml:"allowPrivilegeEscalation"`
	} `yaml:"securityContext"`
	VolumeMounts []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
	} `yaml:"volumeMounts"`
}

// k8sObject is what TestDeployManifests reads of a manifest.
type k8sObject struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Data       map[string]string `yaml:"data"`
	StringData map[string]string `yaml:"stringData"`
	Spec       struct {
		Template struct {
			Spec struct {
				TerminationGracePeriodSeconds int `yaml:"terminationGracePeriodSeconds"`
				SecurityContext               struct {
					RunAsNonRoot bool `yaml:"runAsNonRoot"`
					RunAsUser    int  `yaml:"runAsUser"`
				} `yaml:"securityContext"`
				Containers []k8sContainer `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

// manifests parses every document of a file of deploy/kubernetes.
func manifests(t *testing.T, name string) map[string]k8sObject {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(deployDir, "kubernetes", name))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]k8sObject{}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	for {
		var o k8sObject
		if err := dec.Decode(&o); err == io.EOF {
			return out
		} else if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[o.Kind+"/"+o.Metadata.Name] = o
	}
}

// flagValue returns the value of --name in args (--name=v or --name v).
func flagValue(args []string, name string) string {
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v
		}
		if a == "--"+name && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// checkServeArgs runs `loopctl serve --check` with args (their --config
// replaced by config): every flag is one serve has, and the config, its keys
// and the listen address pass every check.
func checkServeArgs(t *testing.T, where string, args []string, config string) {
	t.Helper()
	var kept []string
	for i := 0; i < len(args); i++ {
		switch {
		case strings.HasPrefix(args[i], "--config="):
		case args[i] == "--config":
			i++
		default:
			kept = append(kept, args[i])
		}
	}
	var out, errb bytes.Buffer
	if code := Main(append(append(kept, "--check", "--config"), config), &out, &errb); code != ExitOK {
		t.Errorf("%s: loopctl %s --check: exit %d: %s", where, strings.Join(kept, " "), code, errb.String())
	}
}

// durationFlag is --name's value in args as a duration (0 when absent).
func durationFlag(t *testing.T, args []string, name string) time.Duration {
	t.Helper()
	v := flagValue(args, name)
	if v == "" {
		return 0
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("--%s %q: %v", name, v, err)
	}
	return d
}

// configMapConfig writes the ConfigMap's loopctl.yaml with its key files
// (the Secret's keys) into a directory and returns the config's path.
func configMapConfig(t *testing.T, objs map[string]k8sObject, mount string) string {
	t.Helper()
	dir := t.TempDir()
	for k, v := range objs["Secret/loopctl-keys"].StringData {
		if err := os.WriteFile(filepath.Join(dir, k), []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	text := strings.ReplaceAll(objs["ConfigMap/loopctl"].Data["loopctl.yaml"], mount+"/", dir+"/")
	p := filepath.Join(dir, "loopctl.yaml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDeployManifests: deploy/kubernetes parses, and its probes, preStop,
// grace and security agree with loopctl serve's flags and the image.
func TestDeployManifests(t *testing.T) {
	objs := manifests(t, "loopctl.yaml")
	d, ok := objs["Deployment/loopctl"]
	if !ok || len(d.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("no Deployment/loopctl with one container: %v", objs)
	}
	pod := d.Spec.Template.Spec
	c := pod.Containers[0]
	_, port, _ := strings.Cut(flagValue(c.Args, "listen"), ":")
	listen, _ := strconv.Atoi(port)
	switch {
	case c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" || c.ReadinessProbe.HTTPGet.Port != listen:
		t.Errorf("readiness probe %+v: want GET /readyz on the --listen port %d", c.ReadinessProbe, listen)
	case c.LivenessProbe == nil || c.LivenessProbe.HTTPGet == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" || c.LivenessProbe.HTTPGet.Port != listen:
		t.Errorf("liveness probe %+v: want GET /healthz on the --listen port %d", c.LivenessProbe, listen)
	case len(c.Ports) != 1 || c.Ports[0].ContainerPort != listen:
		t.Errorf("container ports %+v: want %d", c.Ports, listen)
	}
	preStop := time.Duration(c.Lifecycle.PreStop.Sleep.Seconds) * time.Second
	drainDelay, grace := durationFlag(t, c.Args, "drain-delay"), durationFlag(t, c.Args, "grace")
	if preStop <= 0 || drainDelay <= 0 || grace <= 0 {
		t.Errorf("preStop sleep %v, --drain-delay %v, --grace %v: want each set", preStop, drainDelay, grace)
	}
	if tg := time.Duration(pod.TerminationGracePeriodSeconds) * time.Second; tg < preStop+drainDelay+grace {
		t.Errorf("terminationGracePeriodSeconds %v < preStop %v + drain delay %v + grace %v", tg, preStop, drainDelay, grace)
	}
	sc := pod.SecurityContext
	if !sc.RunAsNonRoot || sc.RunAsUser != 65532 || !c.SecurityContext.ReadOnlyRootFilesystem || c.SecurityContext.AllowPrivilegeEscalation {
		t.Errorf("security: pod %+v, container %+v: want non-root 65532 (the image's USER), a read-only root, no escalation", sc, c.SecurityContext)
	}
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = m.Name
	}
	if mounts["/tmp"] == "" || mounts["/etc/loopctl/keys"] == "" {
		t.Errorf("mounts %v: want /tmp writable and the keys at /etc/loopctl/keys", mounts)
	}
	checkServeArgs(t, "Deployment/loopctl", c.Args, configMapConfig(t, objs, "/etc/loopctl/keys"))
	if _, ok := objs["Service/loopctl"]; !ok {
		t.Error("no Service/loopctl")
	}
	redis := manifests(t, "redis.yaml")
	if _, ok := redis["Service/loopctl-redis"]; !ok || !strings.Contains(strings.Join(c.Args, " ")+readFile(t, "kubernetes/loopctl.yaml"), "redis://loopctl-redis:6379") {
		t.Error("redis.yaml: no Service/loopctl-redis, or loopctl.yaml does not name it")
	}
}

func readFile(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(deployDir, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDeploySystemdUnit: the unit reloads with SIGHUP, stops with SIGTERM
// within --drain-delay + --grace, and its command line passes serve --check.
func TestDeploySystemdUnit(t *testing.T) {
	unit := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(readFile(t, "systemd/loopctl.service")))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok && !strings.HasPrefix(k, "#") {
			unit[k] = v
		}
	}
	args := strings.Fields(unit["ExecStart"])
	if len(args) < 2 || args[1] != "serve" {
		t.Fatalf("ExecStart %q: want loopctl serve", unit["ExecStart"])
	}
	stop, err := time.ParseDuration(unit["TimeoutStopSec"] + "s")
	if err != nil || stop < durationFlag(t, args, "drain-delay")+durationFlag(t, args, "grace") {
		t.Errorf("TimeoutStopSec %q: want at least --drain-delay + --grace", unit["TimeoutStopSec"])
	}
	if unit["ExecReload"] != "/bin/kill -HUP $MAINPID" || unit["KillSignal"] != "SIGTERM" || unit["User"] == "" || unit["User"] == "root" {
		t.Errorf("ExecReload %q, KillSignal %q, User %q", unit["ExecReload"], unit["KillSignal"], unit["User"])
	}
	objs := manifests(t, "loopctl.yaml")
	checkServeArgs(t, "ExecStart", args[1:], configMapConfig(t, objs, "/etc/loopctl/keys"))
}

// TestDockerfile: the final stage is scratch with the static binary, the CA
// certificates, user 65532 and an exec-form HEALTHCHECK running loopctl
// healthcheck; its CMD passes serve --check.
func TestDockerfile(t *testing.T) {
	var final []string
	sc := bufio.NewScanner(strings.NewReader(readFile(t, "../Dockerfile")))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "FROM ") {
			final = nil
		}
		if line != "" && !strings.HasPrefix(line, "#") {
			final = append(final, line)
		}
	}
	text := strings.Join(final, "\n")
	for _, want := range []string{"FROM scratch\n", "/etc/ssl/certs/ca-certificates.crt", "\nUSER 65532:65532\n", `ENTRYPOINT ["/loopctl"]`, `CMD ["/loopctl", "healthcheck"]`} {
		if !strings.Contains(text, want) {
			t.Errorf("the final stage lacks %q:\n%s", want, text)
		}
	}
	if !strings.Contains(readFile(t, "../Dockerfile"), "CGO_ENABLED=0 go build") {
		t.Error("the binary is not built with CGO_ENABLED=0")
	}
}
