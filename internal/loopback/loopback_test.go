package loopback

import "testing"

func TestAddr(t *testing.T) {
	for _, tt := range []struct {
		addr string
		want bool
	}{
		{"127.0.0.1:8080", true},
		{"127.1.2.3:80", true},
		{"[::1]:8080", true},
		{"::1", true},
		{"[::1]", true},
		{"[::ffff:127.0.0.1]:80", true},
		{"localhost:8080", true},
		{"LocalHost:8080", true},
		{"localhost", true},
		{"127.0.0.1", true},
		{":8080", false},
		{"0.0.0.0:8080", false},
		{"[::]:8080", false},
		{"10.0.0.1:8080", false},
		{"example.com:80", false},
		{"localhost.example.com:80", false},
		{"", false},
	} {
		if got := Addr(tt.addr); got != tt.want {
			t.Errorf("Addr(%q) = %v, want %v", tt.addr, got, tt.want)
		}
	}
}
