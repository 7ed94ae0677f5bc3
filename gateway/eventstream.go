package gateway

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
)

// Bedrock's streams (GATEWAY §10.2): InvokeModelWithResponseStream answers
// application/vnd.amazon.eventstream frames, decoded with the AWS SDK's
// eventstream package. Each "chunk" event carries {"bytes": base64 of one
// Messages event}; an exception frame carries an error type. The frames
// are re-emitted as Messages server-sent events, so that the stream
// commits at its first content and is pumped as any Messages stream; an
// exception becomes Messages' error event (before content: a failure, and
// the request fails over; after it: the client's wire's error event).

// eventstreamType is the Content-Type of a Bedrock stream.
const eventstreamType = "application/vnd.amazon.eventstream"

// eventstreamSSE reads an eventstream body as Messages server-sent events.
type eventstreamSSE struct {
	body    io.ReadCloser
	dec     *eventstream.Decoder
	payload []byte       // the decoder's payload buffer
	out     bytes.Buffer // SSE bytes not read yet
	err     error        // the error after out is drained
}

// adaptStream makes a Bedrock stream answer read as Messages SSE.
func adaptStream(resp *http.Response) {
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), eventstreamType) {
		return
	}
	resp.Body = &eventstreamSSE{body: resp.Body, dec: eventstream.NewDecoder()}
	resp.Header["Content-Type"] = sseContentType
	resp.ContentLength = -1
}

// sseContentType is the Content-Type of an adapted stream (shared).
var sseContentType = []string{"text/event-stream"}

func (s *eventstreamSSE) Read(p []byte) (int, error) {
	for s.out.Len() == 0 && s.err == nil {
		s.err = s.frame()
	}
	if s.out.Len() > 0 {
		return s.out.Read(p)
	}
	return 0, s.err
}

func (s *eventstreamSSE) Close() error { return s.body.Close() }

// frame decodes one frame into out as an SSE event.
func (s *eventstreamSSE) frame() error {
	msg, err := s.dec.Decode(s.body, s.payload[:0])
	if err != nil {
		if errors.Is(err, io.EOF) {
			return io.EOF // between frames: the stream's end (the SSE reader checks its end marker)
		}
		return fmt.Errorf("a bad eventstream frame: %w", err)
	}
	s.payload = msg.Payload
	switch typ := headerText(msg.Headers, ":message-type"); typ {
	case "event":
		if ev := headerText(msg.Headers, ":event-type"); ev != "chunk" {
			return nil // not a Messages event (e.g. an initial-response)
		}
		return s.chunk(msg.Payload)
	case "exception", "error":
		name := cmp.Or(headerText(msg.Headers, ":exception-type"), headerText(msg.Headers, ":error-code"))
		var b struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(msg.Payload, &b)
		b.Message = cmp.Or(b.Message, headerText(msg.Headers, ":error-message"))
		ce := bedrockKind(500, name, b.Message)
		s.out.WriteString("event: error\ndata: ")
		s.out.Write(ce.body(APIBedrock))
		s.out.WriteString("\n\n")
		return nil
	default:
		return fmt.Errorf("an eventstream frame of message type %q", typ)
	}
}

// chunk writes the Messages event a chunk's payload carries.
func (s *eventstreamSSE) chunk(payload []byte) error {
	var c struct {
		Bytes []byte `json:"bytes"` // base64 in the JSON
	}
	if err := json.Unmarshal(payload, &c); err != nil || len(c.Bytes) == 0 {
		return fmt.Errorf("a chunk without its bytes (%v)", err)
	}
	var ev struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(c.Bytes, &ev); err != nil || ev.Type == "" || strings.ContainsAny(ev.Type, "\r\n") {
		return fmt.Errorf("a chunk that is not a Messages event (%v)", err)
	}
	data := c.Bytes
	if bytes.ContainsAny(data, "\r\n") {
		var b bytes.Buffer
		_ = json.Compact(&b, data)
		data = b.Bytes()
	}
	s.out.WriteString("event: ")
	s.out.WriteString(ev.Type)
	s.out.WriteString("\ndata: ")
	s.out.Write(data)
	s.out.WriteString("\n\n")
	return nil
}

// headerText is the text of an eventstream header ("" when absent).
func headerText(h eventstream.Headers, name string) string {
	if v := h.Get(name); v != nil {
		return v.String()
	}
	return ""
}
