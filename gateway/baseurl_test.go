package gateway

import (
	"strings"
	"testing"
)

// TestBadBaseURLShowsTheValue: --check names a bad base_url with what was
// written (its query and credentials hidden), also when it does not parse
// as a URL at all, and a port above 65535.
func TestBadBaseURLShowsTheValue(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"http://api.example.com:99999/v1", `"http://api.example.com:99999/v1": port 99999 is above 65535`},
		{"http://api.example.com:4o00/v1", `"http://api.example.com:4o00/v1" is not an http:// or https:// URL`},
		{"http://user:sekret@api example.com/v1?key=sekret", `"http://xxxxx@api example.com/v1?xxxxx" is not an http:// or https:// URL`},
		{"ftp//nohost", `"ftp//nohost" is not an http:// or https:// URL`},
	} {
		_, err := ParseConfig([]byte("upstreams:\n  - {name: up, base_url: \"" + tc.url + "\"}\nmodels:\n  - {name: m, primary: up/a}\n"))
		if err == nil || !strings.Contains(err.Error(), "upstreams[0].base_url: "+tc.want) {
			t.Errorf("%s: %v, want %q", tc.url, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "sekret") {
			t.Errorf("%s: the problem shows a secret: %v", tc.url, err)
		}
	}
}
