package fleet

import (
	"sort"

	"github.com/prometheus/client_golang/prometheus"
)

// Collector returns a Prometheus collector of the Store's metrics:
// loopctl_store_up{store} (1 while the store answers; store is the key
// prefix) and loopctl_store_mode{breaker,kind,mode}, one-hot over the modes
// (shared, local, fail_open, fail_closed) of every shared breaker of the
// Store (kind tool or model). Register it once per Store.
func (s *Store) Collector() prometheus.Collector { return storeCollector{s} }

var (
	storeUpDesc = prometheus.NewDesc("loopctl_store_up",
		"1 while the breakers' shared store answers, 0 while it is down.", []string{"store"}, nil)
	storeModeDesc = prometheus.NewDesc("loopctl_store_mode",
		"Where a shared breaker's state lives (one-hot): shared, or the store-down policy's mode.",
		[]string{"breaker", "kind", "mode"}, nil)
)

type storeCollector struct{ s *Store }

// Describe sends the two descriptors.
func (c storeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- storeUpDesc
	ch <- storeModeDesc
}

// Collect sends the store's state and every breaker's mode.
func (c storeCollector) Collect(ch chan<- prometheus.Metric) {
	up := 0.0
	if c.s.Up() {
		up = 1
	}
	ch <- prometheus.MustNewConstMetric(storeUpDesc, prometheus.GaugeValue, up, c.s.prefix)
	type row struct {
		name, kind string
		mode       Mode
	}
	var rows []row
	for _, m := range c.s.snapshotMembers() {
		switch b := m.(type) {
		case *ToolBreaker:
			rows = append(rows, row{b.name, "tool", b.Mode()})
		case *ModelBreaker:
			rows = append(rows, row{b.name, "model", b.Mode()})
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].kind+rows[i].name < rows[j].kind+rows[j].name })
	for _, r := range rows {
		for _, md := range Modes {
			v := 0.0
			if md == r.mode {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(storeModeDesc, prometheus.GaugeValue, v, r.name, r.kind, md.String())
		}
	}
}
