// Package loopback says whether an address names the loopback interface:
// the one check behind the gateway's doors (a request on a loopback
// listener) and the commands that refuse to listen elsewhere without keys.
package loopback

import (
	"net"
	"net/netip"
	"strings"
)

// Addr reports whether hostport (a host or host:port, an IPv6 address
// bracketed or not) names a loopback address: localhost, in any case, or
// an address of 127.0.0.0/8 or ::1 (IPv4-mapped included). An empty host
// (":8080", every interface) is not one.
func Addr(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = strings.Trim(hostport, "[]")
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
