package gateway

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/loopctl/loopctl-go/gateway/internal/wire"
)

var jsonValid = json.Valid

// holdLimits bound what a stream holds back before its first content chunk.
// Once either is exceeded the gateway commits to the stream (sends what it
// held) and can no longer fail over. The time bound is timeouts.first_byte.
type holdLimits struct {
	events int
	bytes  int
}

// stream reads an upstream's server-sent events one event at a time.
type stream struct {
	r    *bufio.Reader
	ev   bytes.Buffer // the event being read
	held bytes.Buffer // events held back before the first content chunk
	done bool         // the held events end the stream (the end marker)
	wire *endpoint    // how events are classified (the upstream's wire)
	id   string       // Responses: the response id (response.created)
	// tc translates the events into the client's wire (§8.5); nil: the
	// same wire. With it, held holds translated events, and the stream
	// commits at its first translated content.
	tc *wire.Transcoder
}

func newStream(body io.Reader, w *endpoint) *stream {
	r := readerPool.Get().(*bufio.Reader)
	r.Reset(body)
	return &stream{r: r, wire: w}
}

func (s *stream) release() {
	if s.r != nil {
		s.r.Reset(nil)
		readerPool.Put(s.r)
		s.r = nil
	}
}

// next reads the next event (its lines up to and including the blank line
// that ends it) and returns it; the slice is valid until the next call. At
// the end of the body it returns io.EOF if the body ended between events,
// and errCut (wrapping the read error) if it ended inside one.
func (s *stream) next() ([]byte, error) {
	s.ev.Reset()
	for {
		line, err := s.r.ReadSlice('\n')
		s.ev.Write(line)
		switch {
		case err == bufio.ErrBufferFull:
			if s.ev.Len() > 4<<20 {
				return nil, fmt.Errorf("%w: an event over 4 MiB", errCut)
			}
			continue
		case err != nil:
			if err == io.EOF && s.ev.Len() == 0 {
				return nil, io.EOF
			}
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, fmt.Errorf("%w: %w", errCut, err)
		}
		if len(line) == 1 || (len(line) == 2 && line[0] == '\r') {
			if s.ev.Len() == len(line) {
				s.ev.Reset() // stray blank line
				continue
			}
			return s.ev.Bytes(), nil
		}
	}
}

// streamError is an error event the upstream sent; typ is its error type
// or code (overloaded_error, ...), when it had one.
type streamError struct{ payload, typ string }

func (e *streamError) Error() string { return "upstream stream error" + errorInfo([]byte(e.payload)) }

// commit reads events until the first content event (of the stream's wire), holding back what
// comes before it, within the limits; it returns nil once the gateway
// should commit (the held events include the one that made it commit), or
// the failure that ended the stream first.
func (s *stream) commit(lim holdLimits) error {
	for n := 1; ; n++ {
		ev, err := s.next()
		if err == io.EOF {
			return fmt.Errorf("%w: no content before the end", errCut)
		}
		if err != nil {
			return err
		}
		info, err := wire.Classify(s.wire.wire, ev)
		if err != nil {
			return err
		}
		if info.ID != "" {
			s.id = info.ID
		}
		if info.Kind == wire.EventError {
			return &streamError{payload: string(bytes.TrimSpace(wire.Data(ev))), typ: info.ErrType}
		}
		if s.tc != nil {
			if done, err := s.hold(ev, info.Kind); err != nil || done {
				return err
			}
		} else {
			switch info.Kind {
			case wire.EventEnd:
				s.held.Write(ev)
				s.done = true
				return nil
			case wire.EventContent:
				s.held.Write(ev)
				return nil
			}
			s.held.Write(ev)
		}
		if n >= lim.events || s.held.Len() >= lim.bytes {
			return nil
		}
	}
}

// hold translates an event read before the commit point into held; done
// reports that the stream commits at it: its first translated content, or
// the upstream's end marker.
func (s *stream) hold(ev []byte, k wire.EventKind) (done bool, err error) {
	b, err := s.tc.Event(s.held.AvailableBuffer(), ev)
	if err != nil {
		return false, err
	}
	s.held.Write(b)
	s.done = k == wire.EventEnd
	return s.done || s.tc.Committed(), nil
}
