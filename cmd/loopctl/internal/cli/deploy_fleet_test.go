package cli

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestDeployDisruptionBudget: the manifests hold a PodDisruptionBudget
// whose selector is the Deployment's, letting at most one of its replicas
// go at once; the preStop sleep's Kubernetes version is stated.
func TestDeployDisruptionBudget(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(deployDir, "kubernetes", "loopctl.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	type pdb struct {
		Kind string `yaml:"kind"`
		Spec struct {
			MaxUnavailable *int `yaml:"maxUnavailable"`
			MinAvailable   *int `yaml:"minAvailable"`
			Replicas       int  `yaml:"replicas"`
			Selector       struct {
				MatchLabels map[string]string `yaml:"matchLabels"`
			} `yaml:"selector"`
		} `yaml:"spec"`
	}
	var budget, deploy *pdb
	dec := yaml.NewDecoder(bytes.NewReader(b))
	for {
		var o pdb
		if err := dec.Decode(&o); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		switch o.Kind {
		case "PodDisruptionBudget":
			budget = &o
		case "Deployment":
			deploy = &o
		}
	}
	if budget == nil || deploy == nil {
		t.Fatal("want a PodDisruptionBudget and a Deployment")
	}
	if budget.Spec.Selector.MatchLabels["app"] != deploy.Spec.Selector.MatchLabels["app"] || budget.Spec.MaxUnavailable == nil ||
		*budget.Spec.MaxUnavailable < 1 || *budget.Spec.MaxUnavailable >= deploy.Spec.Replicas {
		t.Errorf("budget %+v for a deployment of %d replicas %v", budget.Spec, deploy.Spec.Replicas, deploy.Spec.Selector.MatchLabels)
	}
	if !strings.Contains(string(b), "- --watch-config") {
		t.Error("the Deployment does not reload on a ConfigMap update (--watch-config)")
	}
	if !strings.Contains(string(b), "Kubernetes 1.30") {
		t.Error("the preStop sleep action's Kubernetes version is not stated")
	}
}

// TestDeploySystemdEnvironmentFile: the unit reads the variables of
// key_env and api_key_env from an optional environment file.
func TestDeploySystemdEnvironmentFile(t *testing.T) {
	sc := bufio.NewScanner(strings.NewReader(readFile(t, "systemd/loopctl.service")))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "EnvironmentFile="); ok {
			if v != "-/etc/loopctl/loopctl.env" {
				t.Errorf("EnvironmentFile=%s", v)
			}
			return
		}
	}
	t.Error("no EnvironmentFile for the *_env keys")
}
