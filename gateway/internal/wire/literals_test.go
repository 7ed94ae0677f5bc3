package wire

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// translateLits translates body as Translate does, with the literals its
// decoder read (lits) or without: every string escaped again.
func translateLits(from API, body []byte, to Target, lits bool) (*Translation, error) {
	req, err := decodeRequest(from, body)
	if err != nil {
		return nil, err
	}
	if !lits {
		req.lits = nil
	}
	return translate(from, req, len(body), to)
}

// sameWithLiterals checks that body translates with its literals to what
// it translates to without them: the same error, or bodies that decode to
// the same JSON value with no more invalid UTF-8 or lone surrogates
// (which encoding/json reads as U+FFFD, another decoder otherwise). It
// returns both bodies.
func sameWithLiterals(t *testing.T, from API, body []byte, to API) (with, without []byte) {
	t.Helper()
	target := Target{API: to, Model: "m", Family: to == Messages}
	a, errA := translateLits(from, body, target, true)
	b, errB := translateLits(from, body, target, false)
	if (errA == nil) != (errB == nil) || errA != nil && errA.Error() != errB.Error() {
		t.Fatalf("%s->%s of %q: error %v with literals, %v without", from, to, body, errA, errB)
	}
	if errA != nil {
		return nil, nil
	}
	var va, vb any
	if err := json.Unmarshal(a.Body, &va); err != nil {
		t.Fatalf("%s->%s of %q: %v in %q", from, to, body, err, a.Body)
	}
	_ = json.Unmarshal(b.Body, &vb)
	if !reflect.DeepEqual(va, vb) {
		t.Fatalf("%s->%s of %q:\nwith literals    %s\nwithout literals %s", from, to, body, a.Body, b.Body)
	}
	if oddities(a.Body) != oddities(b.Body) {
		t.Fatalf("%s->%s of %q: %d oddities with literals, %d without:\n%q", from, to, body, oddities(a.Body), oddities(b.Body), a.Body)
	}
	return a.Body, b.Body
}

// oddities counts the invalid UTF-8 bytes and the \u escapes of lone
// surrogates in b, JSON text.
func oddities(b []byte) int {
	n := 0
	for i := 0; i < len(b); {
		switch {
		case b[i] == '\\' && i+1 < len(b) && b[i+1] == 'u' && i+6 <= len(b):
			r := hexRune(b[i+2:])
			if !utf16.IsSurrogate(r) {
				i += 6
			} else if i+12 <= len(b) && b[i+6] == '\\' && b[i+7] == 'u' && utf16.DecodeRune(r, hexRune(b[i+8:])) != utf8.RuneError {
				i += 12
			} else {
				n++
				i += 6
			}
		case b[i] == '\\':
			i += 2
		case b[i] >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				n++
			}
			i += size
		default:
			i++
		}
	}
	return n
}

// Texts of at least minLiteral bytes, as JSON string contents: esc holds
// every kind of escape and character (spelled: an escape appendString
// writes otherwise), lone lone surrogates, bad invalid UTF-8.
const (
	spelled = `\u0041`
	esc     = `quote \" backslash \\ slash \/ controls \b\f\n\r\t\u001f ` + spelled + `\u00e9\ud83d\ude00 \u2028` +
		"raw \u2028\u2029 html <>& non-ASCII 日本語 é — "
	lone = `lone \ud800 high and \udc00 low surrogates and \ud83d\u0041 a broken pair, long enough to be a literal`
	bad  = "invalid \xff\xfe UTF-8 in a text that is long enough to be a literal, here"
)

// literalBodies are requests on each wire whose texts reach every encoder
// unchanged and changed (an error's prefix, joined, trimmed, cut).
var literalBodies = []struct {
	name    string
	from    API
	body    string
	spelled bool // a literal holding spelled reaches the upstream on every wire
}{
	{name: "messages", from: Messages, spelled: true, body: `{"model":"c","max_tokens":100,"system":[{"type":"text","text":"` + esc + `"},{"type":"text","text":"short"}],"messages":[` +
		`{"role":"user","content":"` + esc + `"},` +
		`{"role":"assistant","content":[{"type":"text","text":"` + esc + `"},{"type":"text","text":"` + esc + esc + `"},{"type":"tool_use","id":"t1","name":"f","input":{"q":1}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":"` + esc + `"},{"type":"text","text":"  ` + esc + `  "},` +
		`{"type":"search_result","title":"T","content":[{"type":"text","text":"` + esc + `"}]},` +
		`{"type":"document","source":{"type":"text","media_type":"text/plain","data":"` + esc + `"}}]},` +
		`{"role":"assistant","content":[{"type":"tool_use","id":"t2","name":"f","input":{}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","is_error":true,"content":[{"type":"text","text":"` + esc + `"},{"type":"text","text":"` + esc + `"},` +
		`{"type":"image","source":{"type":"base64","media_type":"image/png","data":"QQ=="}}]},{"type":"text","text":"` + lone + `"}]}],` +
		`"tools":[{"name":"f","description":"` + esc + `","input_schema":{"type":"object"}}]}`},
	{name: "messages string system, bad UTF-8 in content", from: Messages, body: `{"max_tokens":10,"system":"` + lone + `","messages":[{"role":"user","content":"` + bad + `"},` +
		`{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"` + bad + `"}]}]}`},
	{name: "messages bad UTF-8 in a text (encoding/json)", from: Messages, body: `{"max_tokens":10,"system":"` + esc + `","messages":[{"role":"user","content":[{"type":"text","text":"` + bad + `"},{"type":"text","text":"` + esc + `"}]}]}`},
	{name: "chat", from: Chat, spelled: true, body: `{"model":"g","messages":[{"role":"system","content":"` + esc + `"},{"role":"developer","content":[{"type":"text","text":"` + esc + `"}]},` +
		`{"role":"user","content":[{"type":"text","text":"` + esc + `"},{"type":"image_url","image_url":{"url":"data:image/png;base64,QQ=="}}]},` +
		`{"role":"assistant","content":"` + esc + `","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"q\":1}"}}]},` +
		`{"role":"tool","tool_call_id":"c1","content":"Error: ` + esc + `"},{"role":"system","content":"late ` + esc + `"},{"role":"user","content":"` + lone + `"},` +
		`{"role":"assistant","refusal":"` + esc + `","tool_calls":[{"id":"c2","type":"function","function":{"name":"f","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"c2","content":[{"type":"text","text":"` + esc + `"},{"type":"text","text":"` + esc + `"}]}],` +
		`"tools":[{"type":"function","function":{"name":"f","description":"` + esc + `","parameters":{"type":"object"}}},{"type":"custom","custom":{"name":"p","description":"` + esc + `"}}]}`},
	{name: "responses", from: Responses, spelled: true, body: `{"model":"g","instructions":"` + esc + `","input":[{"role":"developer","content":"` + esc + `"},` +
		`{"type":"message","role":"user","content":[{"type":"input_text","text":"` + esc + `"},{"type":"input_image","image_url":"https://x/i.png"}]},` +
		`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"` + esc + `"},{"type":"output_text","text":"` + lone + `"}]},` +
		`{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"Error: ` + esc + `"},` +
		`{"type":"custom_tool_call","call_id":"d","name":"p","input":"` + esc + `"},` +
		`{"type":"custom_tool_call_output","call_id":"d","output":[{"type":"input_text","text":"` + esc + `"},{"type":"input_text","text":"` + lone + `"}]},` +
		`{"role":"user","content":"` + esc + `"}],` +
		`"tools":[{"type":"function","name":"f","description":"` + esc + `","parameters":{"type":"object"}},{"type":"custom","name":"p","description":"` + esc + `"}]}`},
	{name: "responses string input", from: Responses, spelled: true, body: `{"model":"g","input":"` + esc + `"}`},
	{name: "responses lone surrogates", from: Responses, body: `{"instructions":"` + lone + `","input":"` + lone + `"}`},
	{name: "responses bad UTF-8 input", from: Responses, body: `{"input":"` + bad + `"}`},
}

// TestLiterals: a request translated with the literals its decoder read
// decodes to the same JSON as one whose strings are all escaped again,
// on every pair of wires, and the literals reach the upstream.
func TestLiterals(t *testing.T) {
	type row struct {
		name    string
		from    API
		body    []byte
		spelled bool
	}
	rows := []row{{name: "claude code", from: Messages, body: claudeCodeRequest()}}
	for _, to := range []API{Chat, Responses} {
		tr, err := Translate(Messages, claudeCodeRequest(), Target{API: to, Model: "g"})
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, row{name: "claude code on " + to.String(), from: to, body: tr.Body})
	}
	for _, b := range literalBodies {
		rows = append(rows, row{name: b.name, from: b.from, body: []byte(b.body), spelled: b.spelled})
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			for _, to := range []API{Chat, Responses, Messages} {
				if to == r.from {
					continue
				}
				with, without := sameWithLiterals(t, r.from, r.body, to)
				if with == nil {
					t.Fatalf("%s->%s: not translated", r.from, to)
				}
				if r.spelled && (!strings.Contains(string(with), spelled) || strings.Contains(string(without), spelled)) {
					t.Fatalf("%s->%s: no literal reached the upstream:\n%s", r.from, to, with)
				}
			}
		})
	}
}

// checkLiterals checks the literals a reader registered: each decodes
// with encoding/json to its string and holds no invalid UTF-8 or lone
// surrogate.
func checkLiterals(t *testing.T, lits literals) {
	t.Helper()
	for k, lit := range lits {
		s := unsafe.String(k.data, k.len)
		var back string
		if err := json.Unmarshal(lit, &back); err != nil || back != s || oddities(lit) > 0 {
			t.Fatalf("literal %q registered for %q (decodes to %q, %v)", lit, s, back, err)
		}
	}
}

// TestRawString: rawString decodes a literal as encoding/json does, and
// calls it exact only when no character became U+FFFD.
func TestRawString(t *testing.T) {
	for _, tt := range []struct {
		lit   string
		exact bool
	}{
		{lit: `"plain"`, exact: true},
		{lit: `"` + esc + `"`, exact: true},
		{lit: `"\ufffd and ` + "\uFFFD" + `, given"`, exact: true},
		{lit: `"` + lone + `"`, exact: false},
		{lit: `"\ud800"`, exact: false},
		{lit: `"\udc00\ud800 x"`, exact: false},
		{lit: `"\ud83d\u0041"`, exact: false},
		{lit: `"\ud83d"`, exact: false},
		{lit: "\"\xff\xfe two bytes\"", exact: false},
		{lit: "\"\xe6\x97 cut short\"", exact: false},
		{lit: "\"a\\n\xff after an escape\"", exact: false},
	} {
		var want string
		if err := json.Unmarshal([]byte(tt.lit), &want); err != nil {
			t.Fatal(err)
		}
		got, exact := rawString([]byte(tt.lit))
		if got != want || exact != tt.exact {
			t.Errorf("rawString(%q) = %q, %v; want %q, %v", tt.lit, got, exact, want, tt.exact)
		}
	}
}
