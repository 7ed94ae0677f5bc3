package gateway

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestAdminAuthorized: the doors of /admin/… (§9.1) for every kind of
// configuration, method, key and remote address.
func TestAdminAuthorized(t *testing.T) {
	client := []ClientKey{{Name: "team", Key: "sk-client"}}
	admin := []ClientKey{{Name: "oncall", Key: "sk-admin"}}
	for _, tc := range []struct {
		name          string
		client, admin []ClientKey
		method, key   string
		remote        string
		status        int    // 0: allowed
		who           string // the admin key's name when allowed
	}{
		{"no keys: read", nil, nil, "GET", "", "192.0.2.1:5", 0, ""},
		{"no keys: write from loopback", nil, nil, "POST", "", "127.0.0.1:5", 0, ""},
		{"no keys: write from ::1", nil, nil, "POST", "", "[::1]:5", 0, ""},
		{"no keys: write from elsewhere", nil, nil, "POST", "", "192.0.2.1:5", 403, ""},
		{"client keys: read without a key", client, nil, "GET", "", "127.0.0.1:5", 401, ""},
		{"client keys: read with a client key", client, nil, "GET", "sk-client", "127.0.0.1:5", 0, ""},
		{"client keys: write with a client key", client, nil, "POST", "sk-client", "127.0.0.1:5", 403, ""},
		{"client keys: write on loopback", client, nil, "POST", "", "127.0.0.1:5", 403, ""},
		{"admin keys: read with a client key", client, admin, "GET", "sk-client", "127.0.0.1:5", 401, ""},
		{"admin keys: read with the admin key", client, admin, "GET", "sk-admin", "192.0.2.1:5", 0, "oncall"},
		{"admin keys: write with a client key", client, admin, "POST", "sk-client", "127.0.0.1:5", 401, ""},
		{"admin keys: write with a wrong key", client, admin, "POST", "nope", "127.0.0.1:5", 401, ""},
		{"admin keys: write with the admin key", client, admin, "POST", "sk-admin", "192.0.2.1:5", 0, "oncall"},
		{"admin keys only: write without a key on loopback", nil, admin, "POST", "", "127.0.0.1:5", 401, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := chain()
			cfg.Upstreams = []Upstream{{Name: "up", BaseURL: "http://127.0.0.1:1/v1"}}
			cfg.ClientKeys, cfg.AdminKeys = tc.client, tc.admin
			g, err := New(cfg, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			r := httptest.NewRequest(tc.method, "/admin/reload", nil)
			r.RemoteAddr = tc.remote
			if tc.key != "" {
				r.Header.Set("Authorization", "Bearer "+tc.key)
			}
			w := httptest.NewRecorder()
			who, ok := g.adminAuthorized(w, r)
			if ok != (tc.status == 0) || (!ok && w.Code != tc.status) || who != tc.who {
				t.Fatalf("adminAuthorized = %q, %v (status %d); want status %d, name %q", who, ok, w.Code, tc.status, tc.who)
			}
			if ok && w.Code != http.StatusOK {
				t.Fatalf("allowed, but wrote %d", w.Code)
			}
		})
	}
}
