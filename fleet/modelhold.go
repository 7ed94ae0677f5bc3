package fleet

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
)

// Manual control of a shared model breaker (SEMANTICS §8.5, docs/FLEET.md):
// holds, releases and disables with an end are written through the store
// like a trip, on the store's clock, so that every process routes by them
// (each process's mirror has them within one pub/sub message) and they
// survive a restart of every process.

// modelTune is the part of a ModelBreaker's settings that Reconfigure
// changes: every number, and the script arguments made of them.
type modelTune struct {
	set    fallback.Settings // defaults applied
	static [7]string
	quota  string    // QuotaCooldown, µs
	bkoff  [2]string // RecoveryBackoff, MaxRecoveryTimeout (µs): SEMANTICS §9.1
	rec    int64     // RecoveryTimeout, µs
	lease  int64     // ProbeTimeout, µs
}

// newTune returns the tuning of fs (defaults applied).
func (m *ModelBreaker) newTune(fs fallback.Settings) *modelTune {
	tu := &modelTune{set: fs, rec: fs.RecoveryTimeout.Microseconds(), lease: fs.ProbeTimeout.Microseconds(),
		quota: strconv.FormatInt(fs.QuotaCooldown.Microseconds(), 10), bkoff: backoffArgs(fs)}
	tu.static = [7]string{
		strconv.Itoa(fs.TripThreshold), strconv.Itoa(fs.RecoverySuccessesNeeded), strconv.Itoa(fs.MaxFailCount),
		strconv.FormatInt(tu.rec, 10), strconv.FormatInt(tu.lease, 10), strconv.Itoa(m.n), m.ch,
	}
	return tu
}

// tuned returns the settings in force.
func (m *ModelBreaker) tuned() *modelTune { return m.tune.Load() }

// Reconfigure gives the breaker new settings for this process's events, as
// [fallback.Manager.Reconfigure] does: fs must have the same primary and
// chain (else a [*fallback.ChainChangedError]) and is validated as
// fallback.New validates it. The shared state is kept and nothing is
// written: the replica stays attached to the same keys (docs/FLEET.md), and a
// running cooldown keeps its end. While the store is down the local manager
// is reconfigured too. Every process should use the same settings; during a
// rolling reload each applies its own to the events it runs.
func (m *ModelBreaker) Reconfigure(fs fallback.Settings) error {
	fs.Backend, fs.Now, fs.OnTransition = nil, nil, nil
	lm, err := fallback.New(fallback.Settings{Primary: m.set.Primary, Chain: m.set.Chain})
	if err != nil {
		return err
	}
	if err := lm.Reconfigure(fs); err != nil {
		return err // the same validation and the same primary and chain
	}
	fs.Chain = append([]string(nil), fs.Chain...)
	fs.TripThreshold = cmp.Or(fs.TripThreshold, fallback.DefaultTripThreshold)
	fs.RecoverySuccessesNeeded = cmp.Or(fs.RecoverySuccessesNeeded, fallback.DefaultRecoverySuccessesNeeded)
	fs.MaxFailCount = cmp.Or(fs.MaxFailCount, fallback.DefaultMaxFailCount)
	fs.RecoveryTimeout = cmp.Or(fs.RecoveryTimeout, fallback.DefaultRecoveryTimeout)
	fs.ProbeTimeout = cmp.Or(fs.ProbeTimeout, fallback.DefaultProbeTimeout)
	fs.QuotaCooldown = cmp.Or(fs.QuotaCooldown, fallback.DefaultQuotaCooldown)
	fs = maxRecovery(fs)
	fs.OnTransition = m.set.OnTransition
	m.tune.Store(m.newTune(fs))
	m.mu.Lock()
	cur := m.mirror.Load()
	nm := *cur
	nm.route = m.routeOf(&nm, nm.att, nm.dis) // MaxFailCount may have changed
	if cur.mode == LocalMode && cur.local != nil {
		_ = cur.local.Reconfigure(fs)
	}
	m.publish(&nm, cur)
	return nil
}

// Hold holds the primary out of rotation for the whole fleet until until
// (one round trip), as [fallback.Manager.Hold]: the hold's end is the
// store's now plus the time left until until, so that it ends at the same
// instant for every process, and it lives in the store (it survives a
// restart of every process). While the store is down it holds the local
// manager (Policy Local; under FailOpen or FailClosed nothing is held until
// the store answers); the store's state wins when the store answers again.
// Every process reports the transition it makes as the operator's act
// (Transition.Manual "hold", Reason, Until; modelact.go), and the step to
// Recovering at its end as "hold_end".
func (m *ModelBreaker) Hold(until time.Time, reason string) {
	x := extra{ttl: m.ttl(until), reason: reason}
	if m.control("hold", -1, x) {
		return
	}
	if mr := m.mirror.Load(); mr.mode == LocalMode && mr.local != nil {
		mr.local.Hold(until, reason)
	}
}

// Release ends the fleet's hold in force at once (one round trip), as
// [fallback.Manager.Release].
func (m *ModelBreaker) Release() {
	if m.control("release", -1, extra{}) {
		return
	}
	if mr := m.mirror.Load(); mr.mode == LocalMode && mr.local != nil {
		mr.local.Release()
	}
}

// Disable takes a chain entry out of routing for the whole fleet until
// until (zero: until enabled), with a reason, as
// [fallback.Manager.Disable] (one round trip); the end is on the store's
// clock. [ModelBreaker.SetAvailable] with true enables it again. Every
// process reports a transition it makes as the operator's act
// (Transition.Manual "disable", Reason, Until), and the end's as
// "disable_end".
func (m *ModelBreaker) Disable(model string, until time.Time, reason string) error {
	i := m.entryOf(model)
	if i < 0 || model == m.set.Primary {
		return m.localCheck().Disable(model, until, reason) // the same error as fallback's
	}
	var x extra
	if !until.IsZero() {
		if x.ttl = m.ttl(until); x.ttl <= 0 {
			return m.SetAvailable(model, true) // ended already
		}
	}
	x.reason = reason
	if m.control("disable", i, x) {
		return nil
	}
	if mr := m.mirror.Load(); mr.mode == LocalMode && mr.local != nil {
		return mr.local.Disable(model, until, reason)
	}
	return nil
}

// control runs a manual op through the store, as the operator's act of
// the same name (modelact.go); false if the store is down. The reason it
// wrote is set in the mirror at once (other processes read it from the
// change message).
func (m *ModelBreaker) control(op string, item int, x extra) bool {
	if m.mirror.Load().mode != Shared {
		return false
	}
	x.act, x.reason = op, bounded(x.reason)
	v, err := m.script(context.Background(), op, Turn{entry: -1}, item, 0, false, x)
	if err != nil {
		return false
	}
	if op != "release" {
		m.note(item, x.reason, reasonAt{uint64(v[0]), uint64(v[1])})
	}
	return true
}

// ttl is the time left until until (local) on the store's clock, µs.
func (m *ModelBreaker) ttl(until time.Time) int64 {
	return m.s.clock.toStore(until) - m.storeMicros()
}

// reasonAt is the state (incarnation, version) a reason was written at:
// reasons come with the change messages and the replies of this process's
// own ops, which may arrive out of order, so each keeps the newest.
type reasonAt struct{ ep, v uint64 }

func (a reasonAt) before(b reasonAt) bool { return a.ep < b.ep || (a.ep == b.ep && a.v < b.v) }

// note sets the reason of item (-1: the hold, i: chain entry i), written
// at at, in the mirror.
func (m *ModelBreaker) note(item int, reason string, at reasonAt) {
	m.mu.Lock()
	cur := m.mirror.Load()
	nm := *cur
	if !m.setReason(&nm, strconv.Itoa(item)+" "+reason, at) {
		m.mu.Unlock()
		return
	}
	m.publish(&nm, cur)
}

// setReason applies a note ("item reason") written at at to nm, a new
// mirror, unless the mirror has a newer reason for the item; false if not.
func (m *ModelBreaker) setReason(nm *modelMirror, note string, at reasonAt) bool {
	item, reason, _ := strings.Cut(note, " ")
	i, err := strconv.Atoi(item)
	if err != nil || i < -1 || i >= m.n || (nm.rat != nil && !nm.rat[i+1].before(at)) {
		return false
	}
	rat := make([]reasonAt, m.n+1)
	copy(rat, nm.rat)
	rat[i+1], nm.rat = at, rat
	if i < 0 {
		nm.hr = reason
	} else {
		nm.dr = append([]string(nil), nm.dr...)
		nm.dr[i] = reason
	}
	return true
}

// readNotes reads the reasons of the hold and the disables, as notes
// ("item reason": "" for none written), in one read.
func (m *ModelBreaker) readNotes(ctx context.Context) ([]string, error) {
	fields := make([]string, 0, m.n+1)
	fields = append(fields, "hr")
	for i := range m.n {
		fields = append(fields, "dr"+strconv.Itoa(i))
	}
	c := m.s.client
	vs, err := c.Do(ctx, c.B().Hmget().Key(m.keys[0]).Field(fields...).Build()).ToArray()
	if err != nil {
		return nil, err
	}
	if len(vs) != len(fields) {
		return nil, errShortReply
	}
	notes := make([]string, len(vs))
	for i, v := range vs {
		r, _ := v.ToString() // nil: no reason written
		notes[i] = strconv.Itoa(i-1) + " " + r
	}
	return notes, nil
}

// held reports whether the mirror's state is a hold in force at now (µs).
func (c *modelMirror) held(now int64) bool {
	return c.st == fallback.Fallback && c.cause == fallback.CauseManual && now < c.cen
}

// expireDisables applies the lazy end of the disables to a copy of a view.
func (m *ModelBreaker) expireDisables(c *modelMirror, now int64) {
	if c.dexp == 0 || now < c.dexp {
		return
	}
	c.dis, c.du, c.dexp = append([]bool(nil), c.dis...), append([]int64(nil), c.du...), 0
	for i := range m.n {
		if c.dis[i] && c.du[i] > 0 {
			if now >= c.du[i] {
				c.dis[i], c.du[i] = false, 0
			} else if c.dexp == 0 || c.du[i] < c.dexp {
				c.dexp = c.du[i]
			}
		}
	}
	c.route = m.routeOf(c, c.att, c.dis)
}

// StoreName returns a store name for a model breaker of primary and chain:
// name, "@", and the first 16 hex digits of the SHA-256 of the primary and
// the chain (GATEWAY §9.3, docs/FLEET.md). A process that reloads a model
// with the same primary and chain gets the same name, so it re-attaches to
// the same keys and state; a changed primary or chain gets a new name, so
// the state of the old chain is never read for the new one.
func StoreName(name, primary string, chain []string) string {
	h := sha256.New()
	h.Write([]byte(primary))
	for _, c := range chain {
		h.Write([]byte{0})
		h.Write([]byte(c))
	}
	return name + "@" + hex.EncodeToString(h.Sum(nil)[:8])
}
