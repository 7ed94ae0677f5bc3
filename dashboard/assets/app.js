"use strict";
(function () {
  const poll = Number(document.body.dataset.poll) || 250;
  const status = document.getElementById("status");

  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v; else e.setAttribute(k, v);
    }
    for (const k of kids) e.append(k instanceof Node ? k : document.createTextNode(String(k)));
    return e;
  }
  const badge = (s) => el("span", { class: "state " + s }, s);

  function modelCard(m) {
    const dl = el("dl", {},
      el("dt", {}, "routed to"), el("dd", { class: "active-model" }, m.active_model || "— (chain spent)"),
      el("dt", {}, "primary"), el("dd", {}, m.primary || "—"),
      el("dt", {}, "failures"), el("dd", {}, m.consecutive_failures + " / " + m.trip_threshold),
      el("dt", {}, "cooldown left"), el("dd", { class: "cooldown" }, m.cooldown_left || "—"),
      el("dt", {}, "open until"), el("dd", { class: "open-until" },
        m.open_until ? new Date(m.open_until).toLocaleTimeString() + " (" + m.open_reason + ")" : "—"),
      el("dt", {}, "trips"), el("dd", { class: "trips" }, m.trips + (m.cooldown ? " (cooldown " + m.cooldown + ")" : "")),
      ...(m.hold_until ? [el("dt", {}, "held"), el("dd", { class: "hold" },
        "until " + new Date(m.hold_until).toLocaleTimeString() + (m.hold_reason ? ": " + m.hold_reason : ""))] : []),
      el("dt", {}, "probes"), el("dd", { class: "probes" },
        m.probe_successes + " / " + m.probes_needed + (m.probe_in_flight ? " (probe in flight)" : "")),
      el("dt", {}, "ever tripped"), el("dd", {}, m.fallback_activated ? "yes" : "no"));
    const chain = el("table", { class: "chain" },
      el("thead", {}, el("tr", {}, el("th", {}, "chain"), el("th", {}, "failures / budget"), el("th", {}, ""))));
    const body = el("tbody");
    for (const c of m.chain) {
      const cls = (c.active ? "active " : "") + (c.failed ? "failed" : "");
      body.append(el("tr", { class: cls, "data-model": c.model },
        el("td", {}, c.model), el("td", {}, c.attempts + " / " + c.budget),
        el("td", {}, !c.available ? "disabled" + (c.disabled_until ? " until " + new Date(c.disabled_until).toLocaleTimeString() : "") +
          (c.disabled_reason ? ": " + c.disabled_reason : "") : c.active ? "active" : c.failed ? "spent" : "")));
    }
    chain.append(body);
    return el("div", { class: "card", "data-kind": "model", "data-breaker": m.name },
      el("h3", {}, m.name + " ", badge(m.state)), dl, chain, ...(m.pools || []).map(poolTable));
  }

  // A pool entry's members, one row each: the member breaker's state, why
  // it is out (and until when), the latency estimates, in flight, share.
  function poolTable(p) {
    const t = el("table", { class: "pool", "data-pool": p.entry },
      el("thead", {}, el("tr", {}, el("th", {}, p.entry), el("th", {}, "state"), el("th", {}, "out until (why)"),
        el("th", {}, "stream / whole"), el("th", {}, "in flight"), el("th", {}, "share"))));
    const body = el("tbody");
    for (const mb of p.members) {
      const out = mb.open_reason ? (mb.open_until ? new Date(mb.open_until).toLocaleTimeString() : "until enabled") +
        " (" + mb.open_reason + ")" + (mb.disabled_reason ? ": " + mb.disabled_reason : "") : "—";
      body.append(el("tr", { class: mb.disabled ? "failed" : "", "data-kind": "member", "data-member": mb.name },
        el("td", {}, mb.name + (mb.weight !== 1 ? " ×" + mb.weight : "")), el("td", {}, badge(mb.state)),
        el("td", { class: "cause" }, out), el("td", {}, (mb.stream || "—") + " / " + (mb.whole || "—")),
        el("td", { class: "in-flight" }, mb.in_flight), el("td", { class: "share" }, (100 * mb.share).toFixed(0) + "%")));
    }
    t.append(body);
    return t;
  }

  function render(st) {
    const models = document.getElementById("models");
    models.replaceChildren(st.models.length ? el("div", { class: "cards" }, ...st.models.map(modelCard))
      : el("p", { class: "muted" }, "none"));
    // A source without tool breakers (the gateway's) shows no empty table.
    document.getElementById("tool-breakers").hidden = st.tools.length === 0;
    const tools = document.querySelector("#tools tbody");
    tools.replaceChildren(...st.tools.map((t) => el("tr", { "data-kind": "tool", "data-breaker": t.name },
      el("td", {}, t.set), el("td", {}, t.name), el("td", {}, badge(t.state)), el("td", {}, badge(t.status)),
      el("td", {}, t.retry_in), el("td", {}, t.breaker.consecutive_failures), el("td", {}, t.stats.calls),
      el("td", {}, (100 * t.stats.success_rate).toFixed(0) + "%"), el("td", {}, t.stats.score.toFixed(2)),
      el("td", {}, t.stats.max_duration))));
    const trs = document.querySelector("#transitions tbody");
    trs.replaceChildren(...st.transitions.map((t) => el("tr", {},
      el("td", {}, new Date(t.at).toLocaleTimeString()), el("td", {}, t.breaker), el("td", {}, t.kind),
      el("td", {}, badge(t.from)), el("td", {}, badge(t.to)),
      el("td", {}, t.kind === "model" ? (t.from_model || "—") + " → " + (t.to_model || "—") : ""))));
    status.textContent = "updated " + new Date(st.now).toLocaleTimeString();
    status.className = "muted";
  }

  async function tick() {
    try {
      const r = await fetch("state.json", { cache: "no-store" });
      if (!r.ok) throw new Error(r.status + " " + r.statusText);
      render(await r.json());
    } catch (e) {
      status.textContent = "disconnected: " + e.message;
      status.className = "state open";
    }
    setTimeout(tick, poll);
  }
  tick();
})();
