package proc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// StartPortkey starts the Portkey gateway installed (npm ci, from the
// committed lock) in dir with node, on a free loopback port (dir's
// loopback.cjs pins every listener to 127.0.0.1), and waits at most 20s
// until it answers. It returns the Child and the gateway's base URL.
func StartPortkey(ctx context.Context, dir string) (*Child, string, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, "", errors.New("node not found (apt-get install -y nodejs npm)")
	}
	dir, _ = filepath.Abs(dir)
	script := filepath.Join(dir, "node_modules", "@portkey-ai", "gateway", "build", "start-server.js")
	if _, err := os.Stat(script); err != nil {
		return nil, "", fmt.Errorf("%s missing (run npm ci in %s, as gateway.sh and outage.sh do)", script, dir)
	}
	addr, err := FreeAddr()
	if err != nil {
		return nil, "", err
	}
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(node, "--require", filepath.Join(dir, "loopback.cjs"), script, "--port="+port, "--headless")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NODE_ENV=production", "TRUSTED_CUSTOM_HOSTS=127.0.0.1,localhost")
	c, err := Start(cmd)
	if err != nil {
		return nil, "", err
	}
	base := "http://" + addr
	if err := WaitReady(ctx, base+"/", c, 20*time.Second); err != nil {
		c.Stop()
		return nil, "", fmt.Errorf("%v; its log ends:\n%s", err, Tail(c.Log.String(), 1500))
	}
	return c, base, nil
}
