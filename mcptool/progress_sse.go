package mcptool

import (
	"bytes"
	"io"
	"mime"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// sseRelayClient returns a copy of hc (nil: http.DefaultClient) whose
// responses' event streams relay u's progress notifications as they are
// read, before the SDK reads what follows them (and see sseRelay).
func sseRelayClient(hc *http.Client, u *Upstream) *http.Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	c := *hc
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c.Transport = sseRelay{base: base, u: u}
	return &c
}

// sseRelay is a RoundTripper that wraps event-stream bodies in a sseScanner,
// and makes a plain-text 400 about the protocol version a JSON-RPC error
// (see asProtocolError).
type sseRelay struct {
	base http.RoundTripper
	u    *Upstream
}

// RoundTrip implements http.RoundTripper.
func (r sseRelay) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.base.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	resp = asProtocolError(req, resp)
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/event-stream" {
		resp.Body = &sseScanner{ReadCloser: resp.Body, u: r.u}
	}
	return resp, nil
}

// maxEventScan bounds the event data a sseScanner keeps: a progress
// notification is small, and a larger event is not scanned.
const maxEventScan = 64 << 10

// sseScanner passes a server-sent event stream through unchanged and relays
// each progress notification of its upstream's calls once its event is
// complete, before the bytes after it are returned.
type sseScanner struct {
	io.ReadCloser
	u     *Upstream
	line  []byte // the current line so far
	data  []byte // the current event's data lines, joined by '\n'
	large bool   // the current event exceeded maxEventScan
}

// Read implements io.Reader.
func (s *sseScanner) Read(p []byte) (int, error) {
	n, err := s.ReadCloser.Read(p)
	for rest := p[:n]; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			s.addLine(rest)
			break
		}
		s.addLine(rest[:i])
		s.endLine()
		rest = rest[i+1:]
	}
	return n, err
}

// addLine appends a part of the current line, within maxEventScan.
func (s *sseScanner) addLine(b []byte) {
	if len(s.line)+len(b) > maxEventScan {
		s.large = true
		return
	}
	s.line = append(s.line, b...)
}

// endLine handles a complete line: a data field is kept, a blank line ends
// the event.
func (s *sseScanner) endLine() {
	line := bytes.TrimSuffix(s.line, []byte("\r"))
	s.line = s.line[:0]
	switch {
	case len(line) == 0:
		if !s.large && bytes.Contains(s.data, []byte("notifications/progress")) {
			if msg, err := jsonrpc.DecodeMessage(s.data); err == nil {
				s.u.relayProgress(msg)
			}
		}
		s.data, s.large = s.data[:0], false
	case bytes.HasPrefix(line, []byte("data:")):
		v := bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))
		if len(s.data)+len(v) > maxEventScan {
			s.large = true
			return
		}
		if len(s.data) > 0 {
			s.data = append(s.data, '\n')
		}
		s.data = append(s.data, v...)
	}
}
