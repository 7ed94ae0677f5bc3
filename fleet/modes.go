package fleet

// modal is the part of a breaker's mirror that the store-down modes set: the
// mode, and in LocalMode the local breaker seeded from the mirror (L is a
// *fallback.Manager for a model, a *localTool for a tool).
type modal[L any] struct {
	mode  Mode
	local L // LocalMode only
}

// modes returns the mirror's modal part, for inMode.
func (p *modal[L]) modes() *modal[L] { return p }

// mirrorOf is a pointer to a breaker's mirror type M, which embeds modal[L].
type mirrorOf[M, L any] interface {
	*M
	modes() *modal[L]
}

// inMode returns a copy of the mirror cur in mode md, with the local breaker
// seed(cur) in LocalMode and none in any other mode, or nil when cur is in md
// already. Both breakers switch modes through it (a store that went down, or
// answers again: md is Shared), so that a mirror never keeps the local
// breaker of a mode it left, and a mode it is in is never seeded twice.
func inMode[M, L any, P mirrorOf[M, L]](cur P, md Mode, seed func(P) L) P {
	if cur.modes().mode == md {
		return nil
	}
	n := P(new(M))
	*n = *cur
	var none L
	n.modes().mode, n.modes().local = md, none
	if md == LocalMode {
		n.modes().local = seed(cur)
	}
	return n
}
