package pool

import (
	"time"

	"github.com/loopctl/loopctl-go/breaker"
)

// Pool is one model on several deployments (its members), each behind its
// own breaker. Create it with [New]; it is safe for concurrent use. Its
// figures (in flight, latency, headroom) live in its [Figures].
type Pool struct {
	name     string
	f        *Figures
	members  []member
	affinity bool
	equal    bool // every weight is the same
	prunable bool // every weight is within [pruneMin, pruneMax]
	slack    float64
	penalty  float64       // ns
	lease    int64         // AttemptTimeout, ns
	rand     func() uint64 // nil: math/rand/v2
	now      func() time.Time
	// sums[k] is the sum of k equal weights, added one by one (equal only).
	sums []float64
	// costs holds a choice's costs of the admitted members, indexed by
	// member, for the draws after the home's bounds (guarded by f.mu; a
	// field, so that no choice clears an array of MaxMembers).
	costs [MaxMembers]float64
}

// member is one member as the pool keeps it.
type member struct {
	name   string
	hash   uint64 // Hash(name)
	weight float64
	b      *breaker.Breaker
	d      *deployment
	slow   int64 // Member.SlowCallAfter, ns; 0: none
}

// New returns a pool for s, or a [*SettingsError] naming the first bad field.
func New(s Settings) (*Pool, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	p := &Pool{
		name:     s.Name,
		f:        s.Figures,
		affinity: s.Affinity == AffinitySession,
		slack:    s.AffinitySlack,
		penalty:  float64(cmpOr(s.Penalty, DefaultPenalty)),
		lease:    int64(cmpOr(s.AttemptTimeout, DefaultAttemptTimeout)),
		rand:     s.Rand,
		now:      s.Now,
	}
	if p.f == nil {
		p.f = new(Figures)
	}
	if p.slack == 0 {
		p.slack = DefaultAffinitySlack
	}
	if p.now == nil {
		p.now = time.Now
	}
	p.members = make([]member, len(s.Members))
	p.f.mu.Lock()
	for i, m := range s.Members {
		p.members[i] = member{name: m.Name, hash: Hash(m.Name), weight: m.Weight, b: m.Breaker,
			d: p.f.deployment(m.Name), slow: int64(m.SlowCallAfter)}
	}
	p.equal, p.prunable = true, true
	for _, m := range s.Members {
		p.equal = p.equal && m.Weight == s.Members[0].Weight
		p.prunable = p.prunable && m.Weight >= pruneMin && m.Weight <= pruneMax
	}
	p.f.mu.Unlock()
	if p.equal {
		p.sums = make([]float64, len(s.Members)+1)
		for k := 1; k < len(p.sums); k++ {
			p.sums[k] = p.sums[k-1] + s.Members[0].Weight
		}
	}
	return p, nil
}

// cmpOr returns d, or def when d is zero.
func cmpOr(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// Name returns the pool's name (Settings.Name).
func (p *Pool) Name() string { return p.name }

// Len returns the number of members.
func (p *Pool) Len() int { return len(p.members) }

// Member returns member i as configured (i indexes Settings.Members).
func (p *Pool) Member(i int) Member {
	m := &p.members[i]
	return Member{Name: m.name, Weight: m.weight, Breaker: m.b, SlowCallAfter: time.Duration(m.slow)}
}

// Home returns the index of the member that is home to session s when every
// member is admitted (the highest weighted rendezvous score, [Score]), or −1
// for no session. It is pure.
func (p *Pool) Home(s Session) int {
	k, ok := s.Hash()
	if !ok {
		return -1
	}
	return p.home(k, 1<<len(p.members)-1)
}

// servable returns the mask of members n.CanServe accepts, asked outside
// every lock.
func (p *Pool) servable(n *Need) uint64 {
	all := uint64(1)<<len(p.members) - 1
	if n.CanServe == nil {
		return all
	}
	var mask uint64
	for i := range p.members {
		if n.CanServe(i) {
			mask |= 1 << i
		}
	}
	return mask
}
