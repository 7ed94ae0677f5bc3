package fleet

import (
	"context"
	"time"

	"github.com/redis/rueidis"
)

// ResponseTTL is how long the store keeps a response id's upstream model.
const ResponseTTL = 24 * time.Hour

// ResponsePins remembers which upstream model produced each Responses API
// response a gateway relayed (docs/GATEWAY.md §6, previous_response_id), in
// the Store's Redis under its prefix ({prefix:response:<id>}), each for
// [ResponseTTL]. It implements gateway.ResponseStore. While the store is
// down its methods fail at once with [ErrStoreDown].
type ResponsePins struct{ s *Store }

// ResponsePins returns the Store's response pins.
func (s *Store) ResponsePins() *ResponsePins { return &ResponsePins{s} }

// Remember records that the response id came from ref (upstream/model).
func (p *ResponsePins) Remember(ctx context.Context, id, ref string) error {
	if !p.s.up.Load() {
		return ErrStoreDown
	}
	ctx, cancel := context.WithTimeout(ctx, p.s.timeout)
	defer cancel()
	c := p.s.client
	return c.Do(ctx, c.B().Set().Key(p.s.key("response", id)).Value(ref).Ex(ResponseTTL).Build()).Error()
}

// Lookup returns the ref that produced the response id, or "" when the
// store does not know it.
func (p *ResponsePins) Lookup(ctx context.Context, id string) (string, error) {
	if !p.s.up.Load() {
		return "", ErrStoreDown
	}
	ctx, cancel := context.WithTimeout(ctx, p.s.timeout)
	defer cancel()
	c := p.s.client
	ref, err := c.Do(ctx, c.B().Get().Key(p.s.key("response", id)).Build()).ToString()
	if rueidis.IsRedisNil(err) {
		return "", nil
	}
	return ref, err
}
