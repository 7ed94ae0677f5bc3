// Package dashboard serves a live page of loopctl's breakers: every model
// breaker (state, routed model, cooldown left, chain budgets, recovery probes)
// and every tool breaker (state, health, statistics), with the last
// transitions. The page is one self-contained document (HTML, CSS and
// JavaScript embedded in the binary, nothing fetched from elsewhere) that
// polls a JSON endpoint built on the breakers' pure reads, so it never takes a
// probe slot or changes a breaker.
//
// [New] returns an http.Handler a program mounts where it likes:
//
//	log := dashboard.NewLog(100)
//	m, _ := fallback.New(fallback.Settings{Primary: "gpt-4o", Chain: chain,
//		OnTransition: log.ModelHook("gpt-4o")})
//	h := dashboard.New(func() dashboard.Sources {
//		return dashboard.Sources{Models: []dashboard.Model{{Name: "gpt-4o", Manager: m, Settings: settings}}}
//	}, dashboard.Options{Log: log})
//	mux.Handle("/dashboard/", http.StripPrefix("/dashboard", h))
//
// Paths, relative to where it is mounted: "/" the page, "/state.json" the
// state ([State]), "/app.css" and "/app.js" the page's assets.
package dashboard
