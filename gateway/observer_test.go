package gateway

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loopctl/loopctl-go/llmtest"
)

// recorder is an Observer that records what it is told, as lines, and
// checks that each End gets the context its Start returned and that an
// attempt's context derives from its request's.
type recorder struct {
	mu    sync.Mutex
	lines []string
	seq   int
	t     *testing.T
}

type obsKey struct{}

func (o *recorder) add(format string, a ...any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.lines = append(o.lines, fmt.Sprintf(format, a...))
}

// String returns the lines recorded so far, one a line.
func (o *recorder) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return strings.Join(o.lines, "\n")
}

func (o *recorder) id() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.seq++
	return fmt.Sprint(o.seq)
}

func (o *recorder) StartRequest(ctx context.Context, r RequestStart) context.Context {
	o.add("start request %s", r.API)
	return context.WithValue(ctx, obsKey{}, "request")
}

func (o *recorder) EndRequest(ctx context.Context, r RequestEnd) {
	if ctx.Value(obsKey{}) != "request" {
		o.t.Errorf("EndRequest without StartRequest's context")
	}
	o.add("end request %s model=%s served=%s attempts=%d status=%d outcome=%s", r.API, r.Model, r.Served, r.Attempts, r.Status, r.Outcome)
}

func (o *recorder) StartAttempt(ctx context.Context, a AttemptStart) context.Context {
	if ctx.Value(obsKey{}) != "request" {
		o.t.Errorf("attempt %d's context does not derive from its request's", a.Attempt)
	}
	o.add("start attempt %d %s upstream=%s model=%s api=%s host=%s probe=%v state=%v active=%s",
		a.Attempt, a.Target, a.Upstream, a.UpstreamModel, a.API, a.Host, a.Probe, a.State, a.ActiveModel)
	return context.WithValue(ctx, obsKey{}, "attempt "+o.id())
}

func (o *recorder) EndAttempt(ctx context.Context, a AttemptEnd) {
	v, _ := ctx.Value(obsKey{}).(string)
	if !strings.HasPrefix(v, "attempt ") {
		o.t.Errorf("EndAttempt without StartAttempt's context")
	}
	kind := ""
	if a.Verdict == VerdictFailure {
		kind = " kind=" + a.Kind.String()
	}
	o.add("end %s %s%s status=%d err=%v response=%s usage=%v %d/%d state=%v active=%s",
		v, a.Verdict, kind, a.Status, a.Err != nil, a.ResponseModel, a.Usage, a.InputTokens, a.OutputTokens, a.State, a.ActiveModel)
}

// observe posts one chat request for smart to a gateway on script and cfg
// with a recorder as its Observer, checks the answer's status, and returns
// what the recorder saw.
func observe(t *testing.T, script llmtest.Script, cfg Config, status int) string {
	t.Helper()
	rec := &recorder{t: t}
	f := newFixture(t, script, cfg, Options{Observer: rec})
	if a := f.post(chatBody("smart", false)); a.status != status {
		t.Fatalf("status %d, want %d: %s", a.status, status, a.body)
	}
	return rec.String()
}

// checkObserved fails the test unless the recorder saw the lines want.
func checkObserved(t *testing.T, got string, want ...string) {
	t.Helper()
	if w := strings.Join(want, "\n"); got != w {
		t.Errorf("the observer saw\n%s\nwant\n%s", got, w)
	}
}

// TestObserverFailover: a request whose primary is rate-limited and whose
// backup serves is one request and two attempts to the Observer, each
// ended with its verdict, the breaker's state around it, and the served
// answer's model and usage.
func TestObserverFailover(t *testing.T) {
	cfg := Config{Models: []Model{{Name: "smart", Primary: "up/a", Chain: []string{"up/b"}}}}
	script := llmtest.ByModel(map[string]llmtest.Script{
		"a": llmtest.Always(llmtest.Reply{Fault: &llmtest.Fault{Status: 429}}),
		"b": llmtest.Always(llmtest.Reply{Text: "from b", Usage: llmtest.Usage{InputTokens: 12, OutputTokens: 5}}),
	})
	checkObserved(t, observe(t, script, cfg, 200),
		"start request chat",
		"start attempt 1 up/a upstream=up model=a api=openai host=127.0.0.1 probe=false state=primary active=up/a",
		"end attempt 1 failure kind=rate-limit status=429 err=true response= usage=false 0/0 state=primary active=up/a",
		"start attempt 2 up/b upstream=up model=b api=openai host=127.0.0.1 probe=false state=primary active=up/a",
		"end attempt 2 success status=200 err=false response=b usage=true 12/5 state=primary active=up/a",
		"end request chat model=smart served=up/b attempts=2 status=200 outcome=success",
	)
}

// TestObserverRefused: a request refused before routing is still one
// request to the Observer, with no attempt.
func TestObserverRefused(t *testing.T) {
	checkObserved(t, observe(t, llmtest.Always(llmtest.Text("x")), withKeys(chain()), 401),
		"start request chat",
		"end request chat model= served= attempts=0 status=401 outcome=invalid")
}

// TestObserverTransition: an attempt whose verdict trips the breaker (a
// quota failure trips the primary at once) ends with the breaker's new
// state and routed model, beside the ones it was routed with.
func TestObserverTransition(t *testing.T) {
	cfg := Config{Models: []Model{{Name: "smart", Primary: "up/a", Chain: []string{"up/b"}}}}
	script := llmtest.ByModel(map[string]llmtest.Script{
		"a": llmtest.Always(llmtest.Raw(429, `{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}`)),
		"b": llmtest.Always(llmtest.Text("from b")),
	})
	checkObserved(t, observe(t, script, cfg, 200),
		"start request chat",
		"start attempt 1 up/a upstream=up model=a api=openai host=127.0.0.1 probe=false state=primary active=up/a",
		"end attempt 1 failure kind=quota status=429 err=true response= usage=false 0/0 state=fallback active=up/b",
		"start attempt 2 up/b upstream=up model=b api=openai host=127.0.0.1 probe=false state=fallback active=up/b",
		"end attempt 2 success status=200 err=false response=b usage=true 0/0 state=fallback active=up/b",
		"end request chat model=smart served=up/b attempts=2 status=200 outcome=success",
	)
}

// TestObserverHedge: a hedged request is two attempts to the Observer,
// the hedge marked, each started on its own goroutine and both ended by
// the request's: the cancelled slow one as a transient failure (SEMANTICS
// §7.4), the winner as a success.
func TestObserverHedge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{t: t}
		cfg := Config{Models: []Model{{Name: "smart", Primary: "up/a", Chain: []string{"up/b"}, HedgeAfter: 500 * time.Millisecond}},
			Timeouts: Timeouts{FirstByte: time.Minute}}
		b := newBubble(t, llmtest.ByModel(map[string]llmtest.Script{"a": llmtest.Always(llmtest.Hang()), "b": llmtest.Always(llmtest.Text("from b"))}), cfg, Options{Observer: rec})
		if a := b.post(chatBody("smart", false)); a.status != 200 {
			t.Fatalf("status %d: %s", a.status, a.body)
		}
		checkObserved(t, rec.String(),
			"start request chat",
			"start attempt 1 up/a upstream=up model=a api=openai host=upstream.test probe=false state=primary active=up/a",
			"start attempt 2 up/b upstream=up model=b api=openai host=upstream.test probe=false state=primary active=up/a",
			"end attempt 1 failure kind=transient status=0 err=false response= usage=false 0/0 state=primary active=up/a",
			"end attempt 2 success status=200 err=false response=b usage=true 0/0 state=primary active=up/a",
			"end request chat model=smart served=up/b attempts=2 status=200 outcome=success",
		)
	})
}

// nopObserver is an Observer that does nothing: the seam's own cost.
type nopObserver struct{}

func (nopObserver) StartRequest(ctx context.Context, _ RequestStart) context.Context { return ctx }
func (nopObserver) EndRequest(context.Context, RequestEnd)                           {}
func (nopObserver) StartAttempt(ctx context.Context, _ AttemptStart) context.Context { return ctx }
func (nopObserver) EndAttempt(context.Context, AttemptEnd)                           {}

// BenchmarkHandlerObserver is BenchmarkHandler with an Observer that does
// nothing: what the observer seam itself costs a request (BenchmarkHandler
// is the cost with none: one nil check per step).
func BenchmarkHandlerObserver(b *testing.B) { benchHandler(b, Options{Observer: nopObserver{}}) }
