package gateway

import (
	"slices"
	"strings"
)

// A reload and the pools (docs/GATEWAY.md §11.5): a member breaker is
// kept while any pool lists its deployment, reconfigured with the new
// breaker: settings, and the figures are kept (buildPools). For the model
// breaker's keep rule (§9.3) a pool entry is unchanged only when its set
// of member targets is (weights may change), and the model breaker's
// store-name digest covers the members' targets, so that a shared breaker
// is never read by a model whose pool now stands for other deployments.

// poolEntryKey is what a model's entry ref stands for, for the keep rule
// and the store name: an upstream/model as is; pool/<name> with its
// member targets in pools, sorted, weights left out
// ("pool/p=a/m,b/m"); a pool not in pools as its name alone.
func poolEntryKey(ref string, pools []Pool) string {
	name, ok := poolName(ref)
	if !ok {
		return ref
	}
	for _, p := range pools {
		if p.Name != name {
			continue
		}
		targets := make([]string, len(p.Members))
		for i, m := range p.Members {
			targets[i] = m.Target
		}
		slices.Sort(targets)
		return ref + "=" + strings.Join(targets, ",")
	}
	return ref
}

// entryKeys returns model m's primary and chain as poolEntryKey says.
func entryKeys(m Model, pools []Pool) (string, []string) {
	chain := make([]string, len(m.Chain))
	for i, c := range m.Chain {
		chain[i] = poolEntryKey(c, pools)
	}
	return poolEntryKey(m.Primary, pools), chain
}

// samePools reports whether every pool entry of model m stands for the
// same member targets under the pools old and now.
func samePools(m Model, old, now []Pool) bool {
	p0, c0 := entryKeys(m, old)
	p1, c1 := entryKeys(m, now)
	return p0 == p1 && slices.Equal(c0, c1)
}

// storeNameIn is storeName with each pool entry standing for its member
// targets under pools (poolEntryKey); a model without pool entries has
// storeName's name.
func storeNameIn(m Model, pools []Pool) string {
	if m.Name == m.Primary && len(m.Chain) == 0 {
		return m.Name
	}
	m.Primary, m.Chain = entryKeys(m, pools)
	return storeName(m)
}
