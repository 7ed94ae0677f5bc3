package fleet

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"
)

// Defaults used when an [Options] field is zero.
const (
	DefaultPrefix        = "loopctl"
	DefaultStoreTimeout  = 50 * time.Millisecond
	DefaultRetryInterval = 100 * time.Millisecond
)

// ErrInvalidOptions is matched (with errors.Is) by every [OptionsError].
var ErrInvalidOptions = errors.New("fleet: invalid options")

// OptionsError reports a bad [Options] field. It matches [ErrInvalidOptions].
type OptionsError struct {
	Field   string // the offending field
	Problem string // what is wrong with it
}

// Error returns text such as "fleet: Options.Client must not be nil".
func (e *OptionsError) Error() string { return "fleet: Options." + e.Field + " " + e.Problem }

// Is reports whether target is [ErrInvalidOptions].
func (e *OptionsError) Is(target error) bool { return target == ErrInvalidOptions }

// Options configures a [Store].
type Options struct {
	// Client is the Redis (or Valkey) client. Required. The Store does not
	// close it: close it after [Store.Close]. Client-side caching is not used,
	// so the client may be created with DisableCache.
	Client rueidis.Client
	// Prefix starts every key and channel, so that several fleets can share
	// one store. Zero: "loopctl". It must not contain '{' or '}'.
	Prefix string
	// StoreTimeout bounds every script call; a store that does not answer in
	// time is down until it answers again. Zero: 50ms. Negative: an error.
	StoreTimeout time.Duration
	// Policy is what breakers do while the store is down. Zero: Local.
	Policy Policy
	// RetryInterval is how often a store that is down is checked again.
	// Zero: 100ms. Negative: an error.
	RetryInterval time.Duration
	// OnStoreChange, if not nil, is called when the store goes down (up
	// false) and when it answers again and every breaker has re-read its
	// shared state (up true). It runs on the Store's own goroutine or on the
	// goroutine of the call that found the store down, outside every lock.
	OnStoreChange func(up bool)
	// Required makes [Dial] return an error when the store does not answer
	// at start (docs/FLEET.md). false: Dial returns a Store that is down at
	// once (its breakers follow Policy) and joins when the store answers.
	// [New] ignores it: its client is the caller's.
	Required bool
}

// member is a shared breaker registered with its Store.
type member interface {
	channel() string
	onMessage(payload string)
	sync(ctx context.Context) error // re-read the store's state into the mirror (the store wins)
	down(m Mode)                    // the store is down: switch to m
	up()                            // the store answers again: go back to Shared
}

// Store connects shared breakers to one Redis. Create it with [New]; call
// [Store.Close] when done. A Store is safe for concurrent use.
type Store struct {
	client    rueidis.Client
	prefix    string
	timeout   time.Duration
	retry     time.Duration
	policy    Policy
	onChange  func(up bool)
	ownClient bool

	up    atomic.Bool
	clock clockEstimate

	mu      sync.Mutex
	members map[string]member // by channel
	dc      rueidis.DedicatedClient
	release func()
	closed  bool

	kick    chan struct{}
	ready   chan struct{}
	once    sync.Once
	ctx     context.Context
	cancel  context.CancelFunc
	done    chan struct{}
	change  sync.Mutex // serializes OnStoreChange calls
	dialErr error      // why Dial found the store down at start; set before the Store is shared

	offs     *MemberDisables // the pool members disabled by hand (memberdisable.go)
	offsOnce sync.Once
}

// New returns a Store using o.Client and starts its watcher goroutine (the
// pub/sub subscription that feeds every mirror, and the re-check of a store
// that is down). The store is considered up until a call fails.
func New(o Options) (*Store, error) { return newStore(o, nil) }

// newStore is New with, for tests, a virtual store clock (µs).
func newStore(o Options, fake func() int64) (*Store, error) {
	switch {
	case o.Client == nil:
		return nil, &OptionsError{"Client", "must not be nil"}
	case strings.ContainsAny(o.Prefix, "{}"):
		return nil, &OptionsError{"Prefix", "must not contain '{' or '}' (got " + o.Prefix + ")"}
	case o.StoreTimeout < 0:
		return nil, &OptionsError{"StoreTimeout", "must not be negative (got " + o.StoreTimeout.String() + ")"}
	case o.RetryInterval < 0:
		return nil, &OptionsError{"RetryInterval", "must not be negative (got " + o.RetryInterval.String() + ")"}
	case o.Policy < Local || o.Policy > FailClosed:
		return nil, &OptionsError{"Policy", "is not Local, FailOpen or FailClosed (got " + o.Policy.String() + ")"}
	}
	s := &Store{
		client:   o.Client,
		prefix:   o.Prefix,
		timeout:  o.StoreTimeout,
		retry:    o.RetryInterval,
		policy:   o.Policy,
		onChange: o.OnStoreChange,
		members:  make(map[string]member),
		kick:     make(chan struct{}, 1),
		ready:    make(chan struct{}),
		done:     make(chan struct{}),
	}
	if s.prefix == "" {
		s.prefix = DefaultPrefix
	}
	if s.timeout == 0 {
		s.timeout = DefaultStoreTimeout
	}
	if s.retry == 0 {
		s.retry = DefaultRetryInterval
	}
	s.clock.fake = fake
	s.clock.start()
	s.up.Store(true)
	s.ctx, s.cancel = context.WithCancel(context.Background())
	go s.watch()
	return s, nil
}

// Dial connects to the Redis at url (redis://host:port/db, rediss://, or
// unix://; see rueidis.ParseURL) and returns a Store that owns the client:
// Close closes it too. o.Client must be nil. A store that does not answer
// at start is no error unless o.Required (docs/FLEET.md, "Starting without
// the store"): the Store is down from the start, with a client to one node
// that connects when it can, and joins when the store answers.
func Dial(url string, o Options) (*Store, error) {
	if o.Client != nil {
		return nil, &OptionsError{"Client", "must be nil with Dial"}
	}
	co, err := rueidis.ParseURL(url)
	if err != nil {
		return nil, err
	}
	co.DisableCache = true
	c, err := rueidis.NewClient(co)
	var dialErr error // the store down at start: why
	if err != nil {
		if o.Required {
			return nil, err
		}
		// A cluster cannot be discovered before it answers: one node.
		co.ForceSingleClient = true
		if c, _ = rueidis.NewClient(co); c == nil {
			return nil, err
		}
		dialErr = err
	}
	o.Client = c
	s, err := New(o)
	if err != nil {
		c.Close()
		return nil, err
	}
	s.ownClient = true
	if dialErr != nil {
		s.dialErr = dialErr
		s.storeDown()
	}
	return s, nil
}

// DialError returns why a Store made by [Dial] found the store down at
// start (it then runs locally and joins when the store answers); nil when
// the store answered at start, or for a Store made by [New].
func (s *Store) DialError() error { return s.dialErr }

// Close stops the watcher goroutine and, for a Store made by [Dial], closes
// the client. Breakers of a closed Store (and breakers created after Close)
// behave as if the store were down, for good.
func (s *Store) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	<-s.done
	s.storeDown() // every breaker now follows the store-down policy
	if s.ownClient {
		s.client.Close()
	}
}

// Ready returns a channel closed once the Store has subscribed to change
// notifications and re-read every breaker created before then: from then on
// every mirror follows the store.
func (s *Store) Ready() <-chan struct{} { return s.ready }

// ErrStoreDown is what [Store.Check] returns while the store does not answer.
var ErrStoreDown = errors.New("fleet: the breakers' store does not answer")

// Check returns nil while the store answers and an error matching
// [ErrStoreDown] (naming the policy in force) while it is down: a readiness
// check, e.g. the gateway's Options.Ready for /readyz. It makes no round trip.
func (s *Store) Check(context.Context) error {
	if s.up.Load() {
		return nil
	}
	return fmt.Errorf("%w (prefix %q; breakers follow the %s policy until it answers)", ErrStoreDown, s.prefix, s.policy)
}

// Up reports whether the store answered the last call (or the last check).
func (s *Store) Up() bool { return s.up.Load() }

// Policy returns the store-down policy.
func (s *Store) Policy() Policy { return s.policy }

// Prefix returns the key prefix.
func (s *Store) Prefix() string { return s.prefix }

// ClockOffset returns the estimated offset of the store's clock from this
// process's clock (store minus local), as measured from script replies. It is
// used only to refuse calls locally before a cooldown's end.
func (s *Store) ClockOffset() time.Duration { return time.Duration(s.clock.offset.Load()) }

// key returns the hash key of a breaker: its one hash tag is the whole key, so
// every script touches one slot.
func (s *Store) key(kind, name string) string {
	return "{" + s.prefix + ":" + kind + ":" + name + "}"
}

// errDuplicate is register's error for a channel already registered.
var errDuplicate = errors.New("fleet: a shared breaker of that name and kind already exists in this Store")

// register adds m and subscribes to its channel. It is an error to register
// the same channel twice (one shared breaker per name and kind per Store).
func (s *Store) register(m member) error {
	ch := m.channel()
	s.mu.Lock()
	if s.closed { // as if the store were down, for good
		s.mu.Unlock()
		m.down(s.policy.downMode())
		return nil
	}
	if _, dup := s.members[ch]; dup {
		s.mu.Unlock()
		return fmt.Errorf("%w (channel %s)", errDuplicate, ch)
	}
	s.members[ch] = m
	s.mu.Unlock()
	if !s.up.Load() {
		m.down(s.policy.downMode())
		return nil
	}
	ctx, cancel := context.WithTimeout(s.ctx, s.timeout)
	defer cancel()
	if err := m.sync(ctx); err != nil {
		s.storeDown()
		return nil
	}
	m.up()
	return nil
}

// exec runs a script with the store timeout and marks the store down on any
// error; while the store is down it fails at once. tail: as for run.
func (s *Store) exec(sc *rueidis.Lua, keys, args []string, nowIdx int, tail *string) ([]int64, error) {
	if !s.up.Load() {
		return nil, errStoreDown
	}
	ctx, cancel := context.WithTimeout(s.ctx, s.timeout)
	v, err := s.run(ctx, sc, keys, args, nowIdx, tail)
	if err != nil && retryable(err) && ctx.Err() == nil {
		// A connection that broke while idle (a restarted store) fails its
		// first command before sending it; the client redials for the second.
		v, err = s.run(ctx, sc, keys, args, nowIdx, tail)
	}
	cancel()
	if err != nil {
		s.storeDown()
	}
	return v, err
}

// retryable reports whether err is a connection error (not an answer of the
// store, not a timeout).
func retryable(err error) bool {
	if _, isRedis := rueidis.IsRedisErr(err); isRedis {
		return false
	}
	return !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) &&
		!errors.Is(err, rueidis.ErrClosing)
}

// run runs a script and measures the clock offset from its reply, whose
// element nowIdx holds the store's TIME in µs. The reply is integers; with
// tail non-nil its last element may be a string instead, stored in *tail
// (see replyInts).
func (s *Store) run(ctx context.Context, sc *rueidis.Lua, keys, args []string, nowIdx int, tail *string) ([]int64, error) {
	t0 := time.Now()
	res := sc.Exec(ctx, s.client, keys, args)
	t1 := time.Now()
	v, err := replyInts(res, tail)
	if err == nil && nowIdx >= len(v) {
		err = errors.New("fleet: short script reply")
	}
	if err != nil {
		return nil, err
	}
	s.clock.sample(t0, t1, v[nowIdx])
	return v, nil
}

var errStoreDown = ErrStoreDown

// subscribeTimeout bounds the setup of the subscription connection.
const subscribeTimeout = time.Second

// storeDown switches every breaker to the policy's mode and wakes the watcher.
func (s *Store) storeDown() {
	if !s.up.CompareAndSwap(true, false) {
		return
	}
	mode := s.policy.downMode()
	for _, m := range s.snapshotMembers() {
		m.down(mode)
	}
	s.wake()
	s.notify(false)
}

// wake makes the watcher subscribe again and re-read every breaker.
func (s *Store) wake() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

func (s *Store) notify(up bool) {
	if s.onChange == nil {
		return
	}
	s.change.Lock()
	defer s.change.Unlock()
	s.onChange(up)
}

func (s *Store) snapshotMembers() []member {
	s.mu.Lock()
	defer s.mu.Unlock()
	ms := make([]member, 0, len(s.members))
	for _, m := range s.members {
		ms = append(ms, m)
	}
	return ms
}
