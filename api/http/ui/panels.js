// The side panels: details of what was clicked (a switch's or host's ports with rates, counters,
// health reasons and the history sparkline; a trunk's cables; the route between two picked
// hosts), search, the placement form (and the pool's allocations), the jobs and one job's links,
// the events list with its filters, and the collector health. Text goes in with textContent; no markup from the daemon.
"use strict";
window.IBF = window.IBF || {};
IBF.panels = (() => {
  const $ = (id) => document.getElementById(id);
  function h(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) if (attrs[k] !== undefined && attrs[k] !== null) e.setAttribute(k, attrs[k]);
    for (const c of children) e.append(c instanceof Node ? c : String(c ?? ""));
    return e;
  }
  const pct = (v) => (v === null || v === undefined ? "–" : (100 * v).toFixed(1) + " %");
  const rate = (v) => (v === null || v === undefined ? "–" : (v / 1e9 * 8).toFixed(2) + " Gb/s");
  const fail = (container, e) => container.replaceChildren(h("p", { class: "error" }, e.message));

  function table(head, rows, rowAttrs) {
    const t = h("table", {}, h("thead", {}, h("tr", {}, ...head.map((x) => h("th", {}, x)))));
    const body = h("tbody");
    rows.forEach((r, k) => body.append(h("tr", rowAttrs ? rowAttrs(k) : {}, ...r.map((x) => h("td", {}, x)))));
    t.append(body);
    return t;
  }

  /// A sparkline of a port's history (tx and rx utilization, congestion) as SVG.
  function sparkline(history) {
    const NS = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(NS, "svg");
    svg.setAttribute("class", "sparkline");
    svg.setAttribute("viewBox", "0 0 200 40");
    svg.setAttribute("data-points", history.length);
    const series = [["tx_utilization", "spark-tx"], ["rx_utilization", "spark-rx"], ["congestion", "spark-cong"]];
    for (const [field, cls] of series) {
      const pts = history.map((p, k) => [k, p[field]]).filter((p) => p[1] !== null && p[1] !== undefined);
      if (!pts.length) continue;
      const n = Math.max(1, history.length - 1);
      const line = document.createElementNS(NS, "polyline");
      line.setAttribute("class", cls);
      line.setAttribute("points", pts.map(([k, v]) => (200 * k / n).toFixed(1) + "," + (38 - 36 * Math.min(1, v)).toFixed(1)).join(" "));
      svg.append(line);
    }
    return svg;
  }

  async function portDetail(guid, port, container) {
    container.replaceChildren(h("p", {}, "loading port " + port + " …"));
    try {
      const p = await IBF.api.port(guid, port);
      const r = p.rates || {};
      const counters = p.sample ? p.sample.counters : {};
      const reasons = p.health ? p.health.reasons : [];
      container.replaceChildren(
        h("h4", {}, p.node + " port " + p.port + " (" + p.state + ", " + (p.active_rate || "no rate") + ")"),
        h("p", {}, "tx " + rate(r.tx_bytes_per_second) + " (" + pct(r.tx_utilization) + "), rx " +
          rate(r.rx_bytes_per_second) + " (" + pct(r.rx_utilization) + "), congestion " + pct(r.congestion)),
        h("div", { class: "spark-box" }, sparkline(p.history || []),
          h("span", { class: "spark-legend" }, "history: tx, rx, congestion (" + (p.history || []).length + " sweeps)")),
        reasons.length ? h("ul", { class: "reasons" }, ...reasons.map((x) => h("li", {}, x.code + ": " + x.text)))
          : h("p", {}, "health: " + (p.health ? p.health.state : "no report")),
        table(["counter", "value"], Object.entries(counters)));
      container.dataset.port = p.port;
    } catch (e) { fail(container, e); }
  }

  const end = (l, guid) => (l.a.guid === guid ? l.a : l.b);
  function linkRows(links, guid) {
    return links.slice().sort((x, y) => end(x, guid).port - end(y, guid).port).map((l) => {
      const mine = l.a.guid === guid ? l.a : l.b;
      const other = mine === l.a ? l.b : l.a;
      const rt = mine.rates || {};
      return { port: mine.port, cells: [mine.port, other.node + " [" + other.port + "]", l.state, l.rate || "–",
        pct(rt.tx_utilization), pct(rt.rx_utilization), pct(rt.congestion),
        (l.health && l.health.reasons.length) ? l.health.reasons.map((x) => x.code).join(", ") : ""] };
    });
  }

  function portTable(guid, rows, portBox) {
    const t = table(["port", "remote", "state", "rate", "tx", "rx", "cong", "reasons"], rows.map((r) => r.cells),
      (k) => ({ "data-port": rows[k].port, "data-guid": guid, class: "clickable" }));
    t.addEventListener("click", (e) => {
      const tr = e.target.closest("tr[data-port]");
      if (tr) portDetail(guid, tr.dataset.port, portBox);
    });
    return t;
  }

  async function switchDetail(d, container) {
    container.replaceChildren(h("p", {}, "loading " + d.name + " …"));
    try {
      const [node, links] = await Promise.all([IBF.api.node(d.guid), IBF.api.linksOf(d.guid)]);
      const portBox = h("div", { class: "port-detail" });
      container.replaceChildren(
        h("h3", {}, node.description),
        h("p", {}, node.level_name + " · GUID " + node.guid + " · LID " + node.lid + " · " + node.num_ports +
          " ports" + (node.rail !== undefined ? " · rail " + (node.rail + 1) : "") + (node.missing ? " · MISSING" : "")),
        portTable(d.guid, linkRows(links.links, d.guid), portBox), portBox);
      container.dataset.guid = d.guid;
    } catch (e) { fail(container, e); }
  }

  async function hostDetail(name, container) {
    container.replaceChildren(h("p", {}, "loading " + name + " …"));
    try {
      const host = await IBF.api.host(name);
      const portBox = h("div", { class: "port-detail" });
      const rows = [];
      for (const hca of host.hcas) {
        for (const p of hca.ports) {
          rows.push({ guid: hca.guid, port: p.port, cells: [hca.description, "rail " + (hca.rail + 1), p.state,
            p.active_rate || "–", p.leaf.node + " [" + p.leaf.port + "]", p.health ? p.health.state : "",
            p.health && p.health.reasons.length ? p.health.reasons.map((x) => x.code).join(", ") : ""] });
        }
      }
      const t = table(["HCA", "rail", "state", "rate", "leaf", "health", "reasons"], rows.map((r) => r.cells),
        (k) => ({ "data-guid": rows[k].guid, "data-port": rows[k].port, class: "clickable" }));
      t.addEventListener("click", (e) => {
        const tr = e.target.closest("tr[data-port]");
        if (tr) portDetail(tr.dataset.guid, tr.dataset.port, portBox);
      });
      const pick = h("button", { type: "button", id: "pick-host" }, "pick for route");
      pick.addEventListener("click", () => IBF.app.pick(name));
      container.replaceChildren(h("h3", {}, host.name),
        h("p", { "data-health": host.health.status }, "health: " + host.health.status +
          (host.health.reason ? " — " + host.health.reason : "")), pick, t, portBox);
      container.dataset.host = name;
    } catch (e) { fail(container, e); }
  }

  async function trunkDetail(d, container) {
    container.replaceChildren(h("p", {}, "loading cables …"));
    try {
      const links = (await IBF.api.linksOf(d.a)).links.filter((l) => l.a.guid === d.b || l.b.guid === d.b);
      const portBox = h("div", { class: "port-detail" });
      const rows = linkRows(links, d.a);
      container.replaceChildren(h("h3", {}, links.length ? links[0].a.node + " ⇄ " + links[0].b.node : "trunk"),
        h("p", {}, links.length + " cable(s), state " + d.state), portTable(d.a, rows, portBox), portBox);
    } catch (e) { fail(container, e); }
  }

  function details(kind, d) {
    const box = $("details");
    delete box.dataset.guid; delete box.dataset.host;
    if (kind === "switch") return switchDetail(d, box);
    if (kind === "host") return hostDetail(d.host, box);
    if (kind === "trunk") return trunkDetail(d, box);
    if (kind === "hca-link") return hostDetail(d.host, box);
  }

  /// The routes between the two picked hosts; their hops go to the map.
  async function route(a, b) {
    const box = $("picked");
    box.replaceChildren(h("p", {}, "route " + a + " → " + b + " …"));
    try {
      const r = await IBF.api.routes(a, b);
      const hops = [];
      const list = h("ol", { class: "routes" });
      for (const one of r.routes) {
        list.append(h("li", { "data-status": one.status }, one.status + ", " + one.switch_hops + " switch hops: " +
          one.hops.map((x) => (x.from.description || x.from.node) + "[" + x.from.port + "]").join(" → ")));
        hops.push(...one.hops);
      }
      box.replaceChildren(h("h4", {}, "routes " + a + " → " + b + " (" + r.routes.length + ")"), list);
      return hops;
    } catch (e) { fail(box, e); return []; }
  }

  /// Search results for `q` among the map's hosts and switches (GUID, name, node description);
  /// an unknown GUID is asked of the daemon (an HCA: its host).
  async function search(q, map) {
    const box = $("search-results");
    const text = q.trim().toLowerCase();
    if (!text) { box.replaceChildren(); return []; }
    const hits = [];
    const hostPart = text.split(/\s+/)[0];
    for (const x of map.hosts) if (x.name.toLowerCase().includes(hostPart)) hits.push({ kind: "host", key: x.name, label: x.name });
    for (const s of map.switches) {
      if (s.name.toLowerCase().includes(text) || s.guid.toLowerCase() === text || s.guid.toLowerCase().endsWith(text.replace(/^0x/, "")))
        hits.push({ kind: "switch", key: s.guid, label: s.name });
    }
    if (!hits.length && /^(0x)?[0-9a-f]{1,16}$/.test(text)) {
      try {
        const n = await IBF.api.node(text.startsWith("0x") ? text : "0x" + text);
        if (n.host) hits.push({ kind: "host", key: n.host, label: n.host + " (" + n.description + ")" });
        else if (n.type === "switch") hits.push({ kind: "switch", key: n.guid, label: n.description });
      } catch (e) { /* not a node */ }
    }
    const list = h("ul", { class: "results", "data-count": hits.length });
    for (const x of hits.slice(0, 50)) {
      const li = h("li", { class: "clickable", "data-kind": x.kind, "data-key": x.key }, x.kind + ": " + x.label);
      li.addEventListener("click", () => IBF.app.focus(x.kind, x.key));
      list.append(li);
    }
    box.replaceChildren(h("p", {}, hits.length + " match(es) for “" + q + "”"), list);
    return hits;
  }

  function placementBody() {
    const gpus = Number($("pl-gpus").value);
    const body = { pattern: $("pl-pattern").value, allow_degraded: $("pl-degraded").checked };
    if (gpus > 0) { body.gpus = gpus; body.gpus_per_host = Number($("pl-gph").value); }
    else body.hosts = Number($("pl-hosts").value);
    return body;
  }

  async function placement() {
    const box = $("placement-result");
    box.replaceChildren(h("p", {}, "placing …"));
    try {
      const r = await IBF.api.placement(placementBody());
      const best = r.options[0];
      const hot = best.score.hottest_links || [];
      box.replaceChildren(
        h("p", { "data-hosts": best.hosts.length }, "best: " + best.hostlist + " (" + best.hosts.length + " hosts, " +
          best.score.leaf_switches + " leaves, max " + best.score.max_hops + " hops)"),
        h("p", {}, best.score.explanation || ""),
        hot.length ? table(["hottest link", "utilization", "congestion"], hot.map((l) =>
          [l.from.node + "[" + l.from.port + "] → " + l.to.node + "[" + l.to.port + "]", pct(l.utilization), pct(l.congestion)])) : "",
        ...(r.warnings || []).map((w) => h("p", { class: "warning" }, w)));
      return { hosts: best.hosts, hot };
    } catch (e) { fail(box, e); return null; }
  }

  /// The pool's allocations, when the daemon has a pool; clicking one shows its hosts.
  async function pool(configured) {
    const box = $("pool");
    if (!configured) return box.replaceChildren();
    try {
      const a = (await IBF.api.poolAllocations()).allocations;
      const list = h("ul", { class: "allocations" });
      for (const x of a) {
        const li = h("li", { class: "clickable", "data-job": x.job_id }, x.job_id + ": " + x.hosts.map((y) => y.host).join(", ") + " (" + x.state + ")");
        li.addEventListener("click", () => IBF.app.showPlacement({ hosts: x.hosts.map((y) => y.host), hot: [] }));
        list.append(li);
      }
      box.replaceChildren(h("h4", {}, "pool allocations (" + a.length + ")"), list);
    } catch (e) {
      box.replaceChildren(e.status === 404 ? "" : h("p", { class: "error" }, "pool: " + e.message));
    }
  }

  const linkName = (l) => l.from.node + "[" + l.from.port + "] → " + l.to.node + "[" + l.to.port + "]";

  /// One job's links (GET /jobs/{id}/fabric): hottest first, each with the job's share and the
  /// other jobs on it; the job's hosts and hottest links are marked on the map.
  async function jobFabric(id) {
    const box = $("job-fabric");
    box.replaceChildren(h("p", {}, "loading " + id + " …"));
    try {
      const f = await IBF.api.jobFabric(id);
      const b = f.bottleneck || {};
      const others = (l) => (l.neighbours || []).map((n) => n.job + " " + pct(n.share)).join(", ");
      box.replaceChildren(
        h("h4", { "data-job": f.id }, f.id + " (" + f.source + ", " + f.pattern + ", " + f.hosts.length + " hosts)"),
        h("p", {}, "predicted bottleneck now " + rate(b.now_bytes_per_second) + ", at start " +
          rate(b.at_start_bytes_per_second) + " · " + f.links_used + " links, " + f.flows + " flows"),
        table(["hottest link", "util", "cong", "share", "neighbours"], f.hottest_links.map((l) =>
          [linkName(l), pct(l.utilization), pct(l.congestion), pct(l.share), others(l)])),
        h("p", {}, "neighbours: " + (f.neighbours.map((n) => n.job).join(", ") || "none")));
      IBF.app.showPlacement({ hosts: f.hosts, hot: f.hottest_links });
    } catch (e) { fail(box, e); }
  }

  /// The jobs (pool allocations and reported ones) with their hottest link now.
  async function jobs() {
    const box = $("jobs");
    try {
      const r = await IBF.api.jobs();
      const list = h("ul", { class: "allocations" });
      for (const j of r.jobs) {
        const hot = j.hottest_link ? " · hottest " + pct(j.hottest_link.utilization) : "";
        const li = h("li", { class: "clickable", "data-job": j.id }, j.id + " (" + j.source + ", " + j.hosts.length + " hosts)" + hot);
        li.addEventListener("click", () => jobFabric(j.id));
        list.append(li);
      }
      box.replaceChildren(h("h4", {}, "jobs (" + r.jobs.length + ")"), list,
        r.not_ready ? h("p", { class: "warning" }, "not attributed yet: " + r.not_ready) : "");
    } catch (e) { fail(box, e); }
  }

  const events = [];
  const types = new Set();
  function addEvents(list) {
    for (const e of list) {
      if (events.length && e.id <= events[0].id) continue;
      events.unshift(e);
      if (!types.has(e.type)) {
        types.add(e.type);
        $("ev-type").append(h("option", { value: e.type }, e.type));
      }
    }
    events.length = Math.min(events.length, 500);
    showEvents();
  }
  function showEvents() {
    const type = $("ev-type").value, text = $("ev-text").value.toLowerCase();
    const shown = events.filter((e) => (!type || e.type === type) &&
      (!text || (e.node + " " + e.message + " " + e.guid).toLowerCase().includes(text)));
    $("events").replaceChildren(...shown.slice(0, 200).map((e) => h("li", { "data-type": e.type, "data-id": e.id },
      h("time", {}, new Date(e.time * 1000).toLocaleTimeString()), " ", h("b", {}, e.type), " ", e.node + " [" + e.port + "]",
      e.remote ? " ⇄ " + e.remote.node + " [" + e.remote.port + "]" : "", " — " + e.message)));
  }

  function health(body, err) {
    const status = $("status");
    if (!body) {
      status.textContent = "unreachable";
      status.dataset.state = "down";
      return;
    }
    status.textContent = body.status;
    status.dataset.state = body.status;
    const age = (a) => (a && a.age_seconds !== null && a.age_seconds !== undefined ? a.age_seconds.toFixed(1) + " s ago" : "never");
    const rows = [
      ["crawl", (body.crawl.runs || 0) + " runs, last " + age(body.crawl) + (body.crawl.last_error ? ", error: " + body.crawl.last_error : "") +
        (body.crawl.suspect ? ", suspect: " + body.crawl.suspect_reason : "")],
      ["sweep", "#" + (body.sweep.sequence ?? "–") + ", " + (body.sweep.ports_ok ?? "–") + "/" + (body.sweep.ports ?? "–") +
        " ports ok, last " + age(body.sweep) + (body.sweep.last_error ? ", error: " + body.sweep.last_error : "")],
      ["routes", body.routes ? (body.routes.runs + " reads, last " + age(body.routes) + (body.routes.last_error ? ", error: " + body.routes.last_error : "")) : "not read yet"],
      ["OpenSM", body.osm && body.osm.enabled ? (body.osm.connected ? "connected" : "not connected") + ", SM state " + (body.osm.sm_state || "–") : "plugin link off (port probes " + ((body.osm && body.osm.port_probes) || 0) + ")"],
      ["subnet", "local LID " + body.subnet.local_lid + ", SM LID " + body.subnet.sm_lid + (body.subnet.waiting ? ", waiting: " + body.subnet.reason : "")],
    ];
    $("health").replaceChildren(table(["collector", "status"], rows, (k) => ({ "data-collector": rows[k][0] })));
  }

  function init() {
    for (const b of document.querySelectorAll("#tabs button")) {
      b.addEventListener("click", () => {
        for (const x of document.querySelectorAll("#tabs button, .tab")) x.classList.remove("active");
        b.classList.add("active");
        $("tab-" + b.dataset.tab).classList.add("active");
        if (b.dataset.tab === "placement") pool(IBF.app.state.map && IBF.app.state.map.pool);
        if (b.dataset.tab === "jobs") jobs();
      });
    }
    $("ev-type").addEventListener("change", showEvents);
    $("ev-text").addEventListener("input", showEvents);
  }

  return { init, details, route, search, placement, pool, jobs, jobFabric, addEvents, health };
})();
