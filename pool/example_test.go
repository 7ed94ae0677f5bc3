package pool_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/pool"
)

// members returns three deployments of one model, each behind its own
// breaker on clock now.
func members(now func() time.Time) []pool.Member {
	var ms []pool.Member
	for _, name := range []string{"anthropic/claude-sonnet-4-5", "anthropic-b/claude-sonnet-4-5", "bedrock/claude-sonnet-4-5"} {
		b, _ := breaker.New(breaker.Settings{Name: name, Now: now})
		ms = append(ms, pool.Member{Name: name, Weight: 1, Breaker: b})
	}
	return ms
}

// A conversation is homed on one member, so that its prompt cache is reused;
// when its home fails, the request moves on to another member at once, and
// the pool attempt's one verdict for the model breaker is a success.
func Example() {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	p, err := pool.New(pool.Settings{
		Name:    "sonnet",
		Members: members(clock),
		Rand:    func() uint64 { return 0 }, // fixed draws, for a fixed output
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	need := pool.Need{Session: pool.SessionOf("conversation-42"), Stream: true}

	var r pool.Request // one per request
	a, _ := p.Choose(now, &r, need)
	fmt.Println("home:", a.Name(), a.Member() == p.Home(need.Session))
	a.Failure(now.Add(40 * time.Millisecond)) // a 500

	a, _ = p.Choose(now, &r, need)
	a.Headroom(now, pool.Headroom{Requests: pool.Limit{Remaining: 99, Reset: now.Add(time.Minute)}})
	a.FirstContent(now.Add(300 * time.Millisecond))
	a.Success(now.Add(2 * time.Second)) // the stream's end
	fmt.Println("served by:", a.Name())

	res := p.End(now, &r)
	fmt.Println(res.Outcome, "after", res.Tried)
	st := p.Status(now.Add(2*time.Second), a.Member())
	fmt.Println("stream estimate:", st.Stream, "requests left:", st.Headroom.Requests.Remaining)
	// Output:
	// home: bedrock/claude-sonnet-4-5 true
	// served by: anthropic/claude-sonnet-4-5
	// served after 2
	// stream estimate: 300ms requests left: 99
}

// ExampleDo runs a pool attempt with the helper: each member's error says
// its verdict, and a rate-limited member makes way for the next one.
func ExampleDo() {
	p, _ := pool.New(pool.Settings{Name: "sonnet", Members: members(nil)})
	var r pool.Request
	limited := errors.New("429 Too Many Requests")
	answer, res, err := pool.Do(context.Background(), p, &r, pool.Need{}, func(ctx context.Context, a pool.Attempt) (string, error) {
		if a.Name() == "anthropic/claude-sonnet-4-5" {
			return "", pool.RateLimitedError(limited, time.Now().Add(time.Second))
		}
		return "hello from a member", nil
	})
	fmt.Println(answer, err, res.Outcome)
	// Output: hello from a member <nil> served
}

// ExampleSessionOf: only the key's hash is kept; every replica homes the
// session on the same member.
func ExampleSessionOf() {
	s := pool.SessionOf("conversation-42")
	h, ok := s.Hash()
	fmt.Printf("%#016x %v\n", h, ok)
	fmt.Println(pool.SessionOf("") == pool.Session{})
	// Output:
	// 0xc5119362c78ef8e9 true
	// true
}
