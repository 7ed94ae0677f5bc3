package fleet

import (
	"context"
	"strings"

	"github.com/redis/rueidis"

	"github.com/loopctl/loopctl-go/internal/ctxsleep"
)

// onMessage routes a pub/sub message to its breaker's mirror.
func (s *Store) onMessage(m rueidis.PubSubMessage) {
	s.mu.Lock()
	mb := s.members[m.Channel]
	s.mu.Unlock()
	if mb != nil {
		mb.onMessage(m.Message)
	}
}

// watch owns the subscription: it (re)subscribes to every breaker's channel,
// re-reads every breaker's state after a (re)connection, and while the store
// is down checks it every RetryInterval.
func (s *Store) watch() {
	defer close(s.done)
	defer s.unsubscribe()
	for {
		select {
		case <-s.kick: // this pass re-checks everything anyway
		default:
		}
		errc, err := s.subscribe()
		if err == nil {
			err = s.resync()
		}
		if err != nil {
			s.storeDown()
			s.unsubscribe()
			if ctxsleep.Sleep(s.ctx, s.retry) != nil {
				return
			}
			continue
		}
		s.once.Do(func() { close(s.ready) })
		if s.up.CompareAndSwap(false, true) {
			for _, m := range s.snapshotMembers() {
				m.up()
			}
			s.notify(true)
		}
		select {
		case <-s.ctx.Done():
			return
		case <-errc: // the subscription's connection broke
			s.storeDown()
		case <-s.kick: // a call found the store down, or a subscription failed
		}
		s.unsubscribe()
		if ctxsleep.Sleep(s.ctx, s.retry) != nil {
			return
		}
	}
}

// pattern matches the channel of every breaker under the prefix: one
// subscription per process, made before any breaker is read, so that no
// breaker registered later can miss a change.
func (s *Store) pattern() string {
	var b strings.Builder
	b.WriteString("{")
	for _, r := range s.prefix {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteString(":*}:ch")
	return b.String()
}

// subscribe opens a dedicated connection subscribed to every breaker's channel.
func (s *Store) subscribe() (<-chan error, error) {
	dc, release := s.client.Dedicate()
	errc := dc.SetPubSubHooks(rueidis.PubSubHooks{OnMessage: s.onMessage})
	s.mu.Lock()
	s.dc, s.release = dc, release
	s.mu.Unlock()
	// Not on any caller's path: a connection may take longer than StoreTimeout
	// to set up without the store being down.
	ctx, cancel := context.WithTimeout(s.ctx, max(s.timeout, subscribeTimeout))
	defer cancel()
	if err := dc.Do(ctx, dc.B().Psubscribe().Pattern(s.pattern()).Build()).Error(); err != nil {
		return nil, err
	}
	return errc, nil
}

// unsubscribe closes the dedicated connection, if any.
func (s *Store) unsubscribe() {
	s.mu.Lock()
	dc, release := s.dc, s.release
	s.dc, s.release = nil, nil
	s.mu.Unlock()
	if dc != nil {
		dc.Close()
		release()
	}
}

// resync re-reads every breaker's state from the store (the store wins).
func (s *Store) resync() error {
	for _, m := range s.snapshotMembers() {
		ctx, cancel := context.WithTimeout(s.ctx, s.timeout)
		err := m.sync(ctx)
		cancel()
		if err != nil {
			return err
		}
	}
	return nil
}
