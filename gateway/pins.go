package gateway

import (
	"context"
	"sync"
	"time"
)

// ResponseStore remembers, for the Responses API's previous_response_id
// (docs/GATEWAY.md §6), which upstream model (upstream/model) produced a
// response the gateway relayed, so that every gateway of a fleet pins a
// follow-up request to it. fleet.Store's ResponsePins is one, kept in Redis
// for 24 h. The gateway keeps the last [PinnedResponses] ids in process
// too, and asks the store only for ids it does not know. Implementations
// must be safe for concurrent use.
type ResponseStore interface {
	// Remember records that the response id came from ref.
	Remember(ctx context.Context, id, ref string) error
	// Lookup returns the ref that produced the response id, or "" (and a
	// nil error) when the store does not know it.
	Lookup(ctx context.Context, id string) (string, error)
}

// PinnedResponses is how many response ids a gateway remembers in process
// (the most recently relayed ones).
const PinnedResponses = 10_000

// pinTimeout bounds one call to the ResponseStore.
const pinTimeout = time.Second

// pins is the in-process ring of the last PinnedResponses ids, with an
// optional shared store behind it.
type pins struct {
	shared ResponseStore

	mu   sync.Mutex
	refs map[string]string
	ring []string // ids in the order they were remembered
	next int
}

func newPins(shared ResponseStore) *pins {
	return &pins{shared: shared, refs: make(map[string]string), ring: make([]string, PinnedResponses)}
}

func (p *pins) remember(ctx context.Context, id, ref string) {
	if id == "" {
		return
	}
	p.mu.Lock()
	if _, known := p.refs[id]; !known {
		if old := p.ring[p.next]; old != "" {
			delete(p.refs, old)
		}
		p.ring[p.next] = id
		p.next = (p.next + 1) % len(p.ring)
	}
	p.refs[id] = ref
	p.mu.Unlock()
	if p.shared != nil {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pinTimeout)
		_ = p.shared.Remember(ctx, id, ref) // the store down: this process still knows it
		cancel()
	}
}

func (p *pins) lookup(ctx context.Context, id string) string {
	p.mu.Lock()
	ref := p.refs[id]
	p.mu.Unlock()
	if ref != "" || p.shared == nil {
		return ref
	}
	ctx, cancel := context.WithTimeout(ctx, pinTimeout)
	defer cancel()
	ref, _ = p.shared.Lookup(ctx, id)
	return ref
}
