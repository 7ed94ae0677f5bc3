package main

import (
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"time"
)

// runRole serves one target as its own process, for measuring every target
// in a process of its own: "upstream" (the scripted upstream) or
// "proxy UPSTREAM-URL" (a minimal httputil.ReverseProxy to it). It listens on
// a free loopback port, prints "listening ADDR" on stdout and serves until
// its stdin closes (the parent ends, even on a crash) or it is killed. It
// reports false if args name no role.
func runRole(args []string) bool {
	if len(args) == 0 {
		return false
	}
	var h http.Handler
	switch {
	case args[0] == "upstream":
		h = upstream{}
	case args[0] == "proxy" && len(args) == 2:
		u, err := url.Parse(args[1])
		if err != nil {
			fail(err)
		}
		rp := httputil.NewSingleHostReverseProxy(u)
		rp.Transport = proxyTransport()
		rp.FlushInterval = -1
		rp.ErrorLog = log.New(io.Discard, "", 0)
		h = rp
	default:
		return false
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fail(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin) // returns when the parent goes away
		os.Exit(0)
	}()
	fmt.Printf("listening %s\n", ln.Addr())
	fail(srv.Serve(ln))
	return true
}
