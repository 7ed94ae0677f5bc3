package wire

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// ErrMalformedEvent is wrapped by the error Event returns for an upstream
// event it cannot decode: the gateway treats the stream as broken.
var ErrMalformedEvent = errors.New("wire: malformed upstream stream event")

// streamKind is what a neutral stream event says.
type streamKind uint8

// The neutral stream events every upstream decoder produces and every
// client encoder consumes.
const (
	streamStart     streamKind = iota // the answer begins: id, model, usage so far
	streamText                        // text: a fragment of the answer's text
	streamToolStart                   // index, id (call id), name: a tool call begins
	streamToolArgs                    // index, text: a fragment of a call's arguments
	streamThinking                    // text: reasoning without a signature (never sent across wires)
	streamFinish                      // stop: why the answer ended
	streamUsage                       // usage: the whole usage known so far
	streamEnd                         // the upstream's end marker
)

// streamEvent is one neutral stream event. index names a tool call by the
// upstream's own numbering (chat tool index, Messages block index,
// Responses output index); encoders number calls their own way.
type streamEvent struct {
	kind  streamKind
	index int
	text  string
	id    string
	name  string
	model string
	stop  Stop
	usage Usage
}

// upstreamDecoder turns one upstream event into neutral events.
type upstreamDecoder interface {
	decode(e sseEvent, out []streamEvent) ([]streamEvent, error)
}

// clientEncoder appends the client events for one neutral event.
type clientEncoder interface {
	encode(dst []byte, ev *streamEvent) []byte
}

// Transcoder translates one upstream stream into the client's wire, one
// event at a time (GATEWAY §8.5). It keeps only small state: block and
// tool-call numbering, the stop reason, the usage seen so far (and, for a
// Responses client, the output its closing response.completed repeats).
// It is not safe for concurrent use.
type Transcoder struct {
	t         *Translation
	dec       upstreamDecoder
	enc       clientEncoder
	id        string // the client's response id, minted
	created   int64
	events    []streamEvent // scratch, reused per event
	scratch   []byte        // scratch for one client event's data
	committed bool
	ended     bool
	cut       stopCutter
}

// Stream returns a Transcoder for the entry's stream of this translation.
func (t *Translation) Stream() *Transcoder {
	s := &Transcoder{t: t, created: time.Now().Unix()}
	switch t.To.API {
	case Messages:
		s.dec = &messagesStreamDecoder{}
	case Responses:
		s.dec = &responsesStreamDecoder{}
	default:
		s.dec = &chatStreamDecoder{}
	}
	switch t.From {
	case Messages:
		s.id = mintStreamID("msg_")
		s.enc = newMessagesStreamEncoder(s)
	case Responses:
		s.id = mintStreamID(MintedResponsePrefix)
		s.enc = newResponsesStreamEncoder(s)
	default:
		s.id = mintStreamID("chatcmpl-")
		s.enc = newChatStreamEncoder(s)
	}
	return s
}

// Event translates ev, one complete upstream server-sent event (its lines
// up to and including the blank line), appending zero or more complete
// client events to dst. Comments, keep-alives and the upstream's error
// events append nothing: the gateway sends the client wire's own error
// event. Only the upstream's end marker produces the client's. An event
// whose data is not JSON is an error wrapping ErrMalformedEvent.
func (s *Transcoder) Event(dst, ev []byte) ([]byte, error) {
	e := parseSSE(ev)
	if e.data == nil || s.ended {
		return dst, nil
	}
	var err error
	s.events, err = s.dec.decode(e, s.events[:0])
	if err != nil {
		return dst, fmt.Errorf("%w: %s: %v", ErrMalformedEvent, s.t.To.API, err)
	}
	for i := range s.events {
		if s.ended {
			break
		}
		ev := &s.events[i]
		s.ended = ev.kind == streamEnd
		if len(s.t.stops) > 0 {
			dst = s.cutStops(dst, ev)
			continue
		}
		dst = s.enc.encode(dst, ev)
	}
	return dst, nil
}

// Committed reports whether a client content event (text, a tool call's
// start or arguments) has been emitted: the stream's commit point.
func (s *Transcoder) Committed() bool { return s.committed }

// ResponseID is the client's response id minted for this stream (a
// Responses client's error events name it).
func (s *Transcoder) ResponseID() string { return s.id }

// mintStreamID is prefix followed by 24 random hex digits.
func mintStreamID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// stopCutter cuts the text at the first stop sequence on a target that
// cannot (Responses): it holds back at most the longest sequence less one
// byte, so a sequence split across deltas is still found.
type stopCutter struct {
	held    string
	matched bool
	seq     string
	dropped map[int]bool // tool calls begun after the match: dropped
}

// cutStops applies the stop sequences to ev and encodes what is left.
func (s *Transcoder) cutStops(dst []byte, ev *streamEvent) []byte {
	c := &s.cut
	switch ev.kind {
	case streamText:
		if c.matched {
			return dst
		}
		return s.cutText(dst, ev)
	case streamToolStart, streamToolArgs, streamThinking:
		if c.matched && (ev.kind != streamToolArgs || c.dropped[ev.index]) {
			if ev.kind == streamToolStart {
				c.dropped = addToIndexSet(c.dropped, ev.index)
			}
			return dst
		}
	case streamFinish:
		if c.matched {
			ev.stop = StopSequence
		}
	}
	if c.held != "" {
		dst = s.enc.encode(dst, &streamEvent{kind: streamText, text: c.held})
		c.held = ""
	}
	return s.enc.encode(dst, ev)
}

// cutText encodes the text before a stop sequence, or all but the bytes
// that could begin one.
func (s *Transcoder) cutText(dst []byte, ev *streamEvent) []byte {
	c := &s.cut
	text := c.held + ev.text
	at, seq, longest := -1, "", 0
	for _, stop := range s.t.stops {
		longest = max(longest, len(stop))
		if stop == "" {
			continue
		}
		if i := strings.Index(text, stop); i >= 0 && (at < 0 || i < at) {
			at, seq = i, stop
		}
	}
	if at >= 0 {
		c.matched, c.seq, c.held = true, seq, ""
		text = text[:at]
	} else {
		keep := max(len(text)-(longest-1), 0)
		for keep > 0 && keep < len(text) && !utf8.RuneStart(text[keep]) {
			keep--
		}
		text, c.held = text[:keep], text[keep:]
	}
	if text == "" {
		return dst
	}
	return s.enc.encode(dst, &streamEvent{kind: streamText, text: text})
}

// stopSequence is the stop sequence that ended the text, "" when none did.
func (s *Transcoder) stopSequence() string { return s.cut.seq }

// addToIndexSet adds i to the set m, making it when nil.
func addToIndexSet(m map[int]bool, i int) map[int]bool {
	if m == nil {
		m = map[int]bool{}
	}
	m[i] = true
	return m
}

// clientCall returns a tool call's id and tool as the client sees them:
// the upstream's id when the client's wire accepts it, else mapped (one
// minted when the upstream gave none), and the client's tool for the name.
func (s *Transcoder) clientCall(id, name string) (string, Tool) {
	tool := s.t.clientTool(name)
	switch {
	case id == "" && s.t.From == Messages:
		id = mintStreamID("toolu_")
	case id == "":
		id = mintStreamID("call_")
	default:
		id = mapID(id, s.t.From)
	}
	return id, tool
}
