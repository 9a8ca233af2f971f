// The page's state and wiring: the newest map, the groups opened, the selection, picked hosts,
// the placement shown, the metric; boots the live feed and redraws the map when any changes.
// window.ibfView exposes what tests and tools read (first-view time, redraws).
"use strict";
window.IBF = window.IBF || {};
IBF.app = (() => {
  const $ = (id) => document.getElementById(id);
  const state = {
    map: null, layout: null, openGroups: new Set(), metric: "util", selected: null, found: null,
    picked: [], placed: new Set(), hotLinks: [], route: [], leafPort: new Map(),
  };
  window.ibfView = { redraws: 0, firstDrawMs: null, mapBytes: 0 };

  const esc = (v) => String(v).replace(/["\\]/g, "\\$&");
  const hostSelector = (name) => '[data-kind="host"][data-host="' + esc(name) + '"]';
  const switchSelector = (guid) => '[data-kind="switch"][data-guid="' + esc(guid) + '"]';

  /// A CA end of a hop or link has no place of its own on the map: its host's, found by the
  /// leaf port at the other end.
  function withHosts(from, to) {
    const known = (e) => state.map.switches.some((s) => s.guid === e.guid);
    const f = Object.assign({}, from), t = Object.assign({}, to);
    if (!known(f)) f.host = state.leafPort.get(t.guid + ":" + t.port);
    if (!known(t)) t.host = state.leafPort.get(f.guid + ":" + f.port);
    return { from: f, to: t };
  }

  function draw() {
    if (!state.map) return;
    const r = $("map").getBoundingClientRect();
    state.layout = IBF.layout.compute(state.map, state.openGroups, r.height > 0 ? r.width / r.height : 2);
    IBF.map.render(state.map, state.layout, {
      metric: state.metric, overrides: IBF.live.overrides, openGroups: state.openGroups,
      placed: state.placed, picked: state.picked, selected: state.selected, found: state.found,
      hot: new Set(state.hotLinks.map((l) => l.from.guid + "|" + l.to.guid)),
      hotLinks: state.hotLinks.map((l) => Object.assign(withHosts(l.from, l.to), { utilization: l.utilization })),
      route: state.route.map((x) => withHosts(x.from, x.to)),
    });
    IBF.map.legend($("legend"), state.map, state.metric);
    counts();
    window.ibfView.redraws++;
    if (window.ibfView.firstDrawMs === null) {
      window.ibfView.firstDrawMs = performance.now();
      performance.mark("ibf-map-drawn");
      document.body.dataset.mapDrawn = "1";
    }
  }

  function counts() {
    const c = state.map.counts;
    const lv = Object.entries(c.switches_per_level).map(([k, v]) => v + " " + k).join(", ");
    const bad = ["degraded", "faulty", "down"].map((s) => [s, (c.cables_by_state || {})[s] || 0])
      .filter(([, n]) => n).map(([s, n]) => n + " " + s).join(", ");
    const hb = c.hosts_by_health || {};
    $("counts").textContent = c.switches + " switches (" + lv + ") · " + c.hosts + " hosts (" +
      (hb.ok || 0) + " ok) · " + c.cas + " HCAs · " + c.cables + " cables" + (bad ? " (" + bad + ")" : "");
  }

  function onMap(map) {
    if (map) {
      state.map = map;
      state.leafPort = new Map();
      for (const h of map.hosts) for (const [leaf, port] of h.ports) state.leafPort.set(map.switches[leaf].guid + ":" + port, h.name);
    }
    draw();
  }

  function select(kind, d) {
    if (kind === "host-block" || kind === "band") {
      const g = Number(d.group);
      if (state.openGroups.has(g)) state.openGroups.delete(g); else state.openGroups.add(g);
      return draw();
    }
    state.selected = kind === "switch" ? switchSelector(d.guid) : kind === "host" ? hostSelector(d.host) : null;
    draw();
    IBF.panels.details(kind, d);
  }

  function openGroupOf(hostName) {
    const h = state.map.hosts.find((x) => x.name === hostName);
    if (h && !state.layout.hosts.has(hostName)) state.openGroups.add(h.group);
  }

  /// Shows a search result: opens its group, marks and centres it, and shows its details.
  function focus(kind, key) {
    if (kind === "host") openGroupOf(key);
    state.found = kind === "host" ? hostSelector(key) : switchSelector(key);
    draw();
    IBF.map.reveal(state.found);
    const s = state.map.switches.find((x) => x.guid === key);
    IBF.panels.details(kind, kind === "host" ? { host: key } : { guid: key, name: s ? s.name : key });
  }

  async function pick(name) {
    if (state.picked.includes(name)) return;
    state.picked = [...state.picked.slice(-1), name];
    if (state.picked.length === 2) state.route = await IBF.panels.route(state.picked[0], state.picked[1]);
    draw();
  }

  function showPlacement(p) {
    if (!p) return;
    state.placed = new Set(p.hosts);
    state.hotLinks = p.hot;
    for (const h of p.hosts) openGroupOf(h);
    draw();
  }

  async function boot() {
    IBF.panels.init();
    IBF.map.init($("map"), { select });
    $("metric").addEventListener("change", (e) => { state.metric = e.target.value; draw(); });
    $("search-form").addEventListener("submit", async (e) => {
      e.preventDefault();
      const hits = await IBF.panels.search($("search").value, state.map || { hosts: [], switches: [] });
      if (hits.length) focus(hits[0].kind, hits[0].key);
    });
    $("placement-form").addEventListener("submit", async (e) => {
      e.preventDefault();
      showPlacement(await IBF.panels.placement());
    });
    $("pl-clear").addEventListener("click", () => { state.placed = new Set(); state.hotLinks = []; draw(); });
    window.addEventListener("resize", () => draw());
    let last = 0;
    for (;;) {
      try {
        const { body, headers } = await IBF.api.map();
        last = Number(headers.get("X-Last-Event-Id") || 0);
        onMap(body);
        break;
      } catch (e) {
        $("counts").textContent = "waiting for the daemon: " + e.message;
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
    IBF.live.start({ onMap, onEvents: IBF.panels.addEvents, onHealth: IBF.panels.health }, last);
  }

  document.addEventListener("DOMContentLoaded", boot);
  return { pick, focus, showPlacement, state };
})();
