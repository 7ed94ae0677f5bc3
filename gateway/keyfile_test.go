package gateway

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKeysFromFiles: key_file and api_key_file are read (whitespace
// trimmed); a missing or empty file, or a key with two sources, is a
// problem named by its key path.
func TestKeysFromFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	client, admin, up := write("client", "sk-client\n"), write("admin", "  sk-admin \n"), write("up", "sk-up\n")
	yaml := "client_keys: [{name: c, key_file: " + client + "}]\nadmin_keys: [{name: a, key_file: " + admin + "}]\n" +
		"upstreams: [{name: u, base_url: 'http://127.0.0.1:1/v1', api_key_file: " + up + "}]\nmodels: [{name: m, primary: u/x}]\n"
	c, err := ParseConfig([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	g, err := New(c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if matchKey("sk-client", g.clients.keys) != 0 || matchKey("sk-admin", g.admins.keys) != 0 || g.upstreams["u"].key != "sk-up" {
		t.Fatalf("keys not read from their files: upstream key %q", g.upstreams["u"].key)
	}
	for _, tc := range []struct{ name, yaml, want string }{
		{"missing file", strings.Replace(yaml, client, filepath.Join(dir, "nope"), 1), "client_keys[0].key_file: open "},
		{"empty file", strings.Replace(yaml, up, write("empty", "\n"), 1), "upstreams[0].api_key_file: " + filepath.Join(dir, "empty") + " holds no key"},
		{"two sources", strings.Replace(yaml, "key_file: "+admin, "key_file: "+admin+", key_env: X", 1), "admin_keys[0].key_file: key_env and key_file are two sources of one key"},
		{"two upstream sources", strings.Replace(yaml, "api_key_file: "+up, "api_key_file: "+up+", api_key_env: X", 1), "upstreams[0].api_key_file: api_key_env and api_key_file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseConfig([]byte(tc.yaml))
			if err == nil {
				var g *Gateway
				if g, err = New(c, Options{}); err == nil {
					g.Close()
				}
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}
