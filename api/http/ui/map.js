// The fabric map as SVG: switches, host groups and hosts at the layout's places (layout.js),
// trunks (the cables between two switches) coloured by the chosen metric, cables that are not ok
// drawn on their own and marked by state so they stand out at any zoom; large fabrics fold the
// healthy trunks of a group into one band. Every drawn element carries its identity and state in
// data- attributes (data-kind, data-guid, data-state, ...). Redrawn whole on each update.
"use strict";
window.IBF = window.IBF || {};
IBF.map = (() => {
  const NS = "http://www.w3.org/2000/svg";
  const EACH_TRUNK = 2000;       // up to this many trunks every one is drawn
  const EACH_HOST_CABLE = 3000;  // and up to this many host cables
  const SEVERITY = { ok: 0, degraded: 1, faulty: 2, down: 3, missing: 4 };
  const worse = (a, b) => ((SEVERITY[a] || 0) >= (SEVERITY[b] || 0) ? a : b);

  function el(tag, attrs, parent) {
    const e = document.createElementNS(NS, tag);
    for (const k in attrs) if (attrs[k] !== undefined && attrs[k] !== null) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function title(e, text) { el("title", {}, e).textContent = text; return e; }

  /// 0..1 on the metric's scale: utilization as is, congestion up to 20 %, errors on a log scale.
  function scaled(value, metric) {
    if (!value || value <= 0) return 0;
    if (metric === "cong") return Math.min(1, value / 0.2);
    if (metric === "err") return Math.min(1, Math.log10(1 + value) / 2);
    return Math.min(1, value);
  }
  function colour(value, metric) {
    const t = scaled(value, metric);
    return "hsl(" + Math.round(120 * (1 - t)) + ",70%," + (t === 0 ? 58 : 45) + "%)";
  }
  const metricValue = (x, metric) => x[metric] || 0;
  const metricText = (v, metric) =>
    metric === "err" ? v.toFixed(2) + " errors/s" : (100 * v).toFixed(1) + " %";

  /// The trunk's state and its cables' states with the live overrides (port -> state) applied.
  function trunkState(t, map, overrides) {
    const ga = map.switches[t.a].guid, gb = map.switches[t.b].guid;
    let state = "ok";
    const cables = t.cables.map(([pa, pb, s]) => {
      const o = overrides.get(ga + ":" + pa) || overrides.get(gb + ":" + pb);
      const cs = o ? worse(o, s) : s;
      state = worse(state, cs);
      return [pa, pb, cs];
    });
    return { state, cables };
  }
  function hostCables(h, map, overrides) {
    let state = "ok";
    const cables = h.ports.map(([leaf, port, s]) => {
      const o = overrides.get(map.switches[leaf].guid + ":" + port);
      const cs = o ? worse(o, s) : s;
      state = worse(state, cs);
      return [leaf, port, cs];
    });
    return { state, cables };
  }

  let svg, view = null, handlers = {}, dragging = null;

  function init(svgElement, callbacks) {
    svg = svgElement;
    handlers = callbacks;
    svg.addEventListener("wheel", onWheel, { passive: false });
    svg.addEventListener("mousedown", (e) => { dragging = { x: e.clientX, y: e.clientY, moved: false }; });
    window.addEventListener("mousemove", onDrag);
    window.addEventListener("mouseup", () => { setTimeout(() => { dragging = null; }, 0); });
    svg.addEventListener("click", onClick);
  }

  function applyView() { svg.setAttribute("viewBox", [view.x, view.y, view.w, view.h].join(" ")); }
  function onWheel(e) {
    if (!view) return;
    e.preventDefault();
    const r = svg.getBoundingClientRect();
    const k = e.deltaY > 0 ? 1.2 : 1 / 1.2;
    const px = view.x + ((e.clientX - r.left) / r.width) * view.w;
    const py = view.y + ((e.clientY - r.top) / r.height) * view.h;
    view = { x: px - (px - view.x) * k, y: py - (py - view.y) * k, w: view.w * k, h: view.h * k };
    applyView();
  }
  function onDrag(e) {
    if (!dragging || !view || !(e.buttons & 1)) return;
    const r = svg.getBoundingClientRect();
    const dx = e.clientX - dragging.x, dy = e.clientY - dragging.y;
    if (Math.abs(dx) + Math.abs(dy) > 3) dragging.moved = true;
    view.x -= (dx / r.width) * view.w;
    view.y -= (dy / r.height) * view.h;
    dragging.x = e.clientX;
    dragging.y = e.clientY;
    applyView();
  }
  function onClick(e) {
    if (dragging && dragging.moved) return;
    const target = e.target.closest("[data-kind]");
    if (target && handlers.select) handlers.select(target.dataset.kind, target.dataset, target);
  }

  function fit(layout) {
    const r = svg.getBoundingClientRect();
    const aspect = r.height > 0 ? r.width / r.height : 2;
    let w = layout.width, h = layout.height;
    if (w / h > aspect) h = w / aspect; else w = h * aspect;
    view = { x: 0, y: 0, w, h };
    applyView();
  }

  /// Draws `map` at `layout`. opts: metric, overrides (Map "guid:port" -> state), placed (Set of
  /// host names), hot (Set of "guidA|guidB"), route (array of [guid, guid] hops), selected,
  /// found (a data-key to mark).
  function render(map, layout, opts) {
    const first = !view || svg.dataset.width !== String(layout.width);
    svg.replaceChildren();
    const g = (id) => el("g", { id }, svg);
    const rows = g("rows"), links = g("links"), hcaLinks = g("hca-links"), switches = g("switches"),
      hostsG = g("hosts"), overlay = g("overlay");
    drawRows(rows, layout, map);
    const pos = (i) => layout.sw[i];
    const half = layout.box / 2;
    // Trunks: each one, or folded into bands per group when there are many.
    const each = map.trunks.length <= EACH_TRUNK;
    const bands = new Map();
    let drawnTrunks = 0;
    for (const t of map.trunks) {
      const { state, cables } = trunkState(t, map, opts.overrides);
      const sa = map.switches[t.a], sb = map.switches[t.b];
      const group = sa.group >= 0 ? sa.group : sb.group;
      const open = opts.openGroups.has(group);
      const value = metricValue(t, opts.metric);
      if (!each && state === "ok" && !open) {
        const key = group + "/" + sa.level + "-" + sb.level;
        const band = bands.get(key) || { group, la: sa.level, lb: sb.level, n: 0, trunks: 0, value: 0 };
        band.n += t.n; band.trunks += 1; band.value = Math.max(band.value, value);
        bands.set(key, band);
        continue;
      }
      const a = pos(t.a), b = pos(t.b);
      if (!a || !b) continue;
      drawnTrunks++;
      const line = el("line", {
        class: "trunk", x1: a.x + half, y1: a.y, x2: b.x + half, y2: b.y + layout.box,
        stroke: state === "ok" ? colour(value, opts.metric) : null,
        "data-kind": "trunk", "data-a": sa.guid, "data-b": sb.guid,
        "data-a-ports": cables.map((c) => c[0]).join(" "), "data-b-ports": cables.map((c) => c[1]).join(" "),
        "data-states": cables.map((c) => c[2]).join(" "),
        "data-state": state, "data-n": t.n, "data-value": value, "data-missing": t.missing || null,
        "data-hot": opts.hot.has(sa.guid + "|" + sb.guid) || opts.hot.has(sb.guid + "|" + sa.guid) ? "1" : null,
      }, links);
      title(line, sa.name + " ⇄ " + sb.name + ": " + t.n + " cable(s), " + state +
        (t.missing ? " (" + t.missing + " missing)" : "") + ", " +
        metricText(value, opts.metric));
    }
    for (const band of bands.values()) drawBand(links, band, layout, map, opts);
    // Switches.
    for (const s of map.switches) {
      const p = pos(s.i);
      if (!p) continue;
      const r = el("rect", {
        class: "switch", x: p.x, y: p.y, width: layout.box, height: layout.box, rx: 2,
        "data-kind": "switch", "data-guid": s.guid, "data-name": s.name, "data-level": s.level_name,
        "data-group": s.group, "data-rail": s.rail, "data-state": s.state,
        "data-bad-cables": s.bad_cables,
      }, switches);
      title(r, s.name + " (" + s.level_name + (s.group >= 0 ? ", group " + (s.group + 1) : "") +
        (s.rail >= 0 ? ", rail " + (s.rail + 1) : "") + ") " + s.state +
        (s.bad_cables ? ", " + s.bad_cables + " cable(s) not ok" : ""));
    }
    // Hosts: one by one, or a block per group.
    const hostCableCount = map.hosts.reduce((n, h) => n + (layout.hosts.has(h.name) ? h.ports.length : 0), 0);
    for (const h of map.hosts) {
      const p = layout.hosts.get(h.name);
      if (!p) continue;
      const { cables } = hostCables(h, map, opts.overrides);
      // The daemon's verdict, raised by live marks: some cables down = degraded, all = down.
      const live = cables.filter((c) => c[2] === "down").length;
      const state = worse(h.state, live === 0 ? "ok" : live === cables.length ? "down" : "degraded");
      for (const [leaf, port, cs] of cables) {
        if (hostCableCount > EACH_HOST_CABLE && cs === "ok") continue;
        const lp = pos(leaf);
        if (!lp) continue;
        el("line", {
          class: "hca-link", x1: p.x + layout.hostBox / 2, y1: p.y, x2: lp.x + half, y2: lp.y + layout.box,
          stroke: cs === "ok" ? colour(metricValue(h, opts.metric), opts.metric) : null,
          "data-kind": "hca-link", "data-host": h.name, "data-leaf": map.switches[leaf].guid,
          "data-port": port, "data-state": cs,
        }, hcaLinks);
      }
      const r = el("rect", {
        class: "host", x: p.x, y: p.y, width: layout.hostBox, height: layout.hostBox,
        "data-kind": "host", "data-host": h.name, "data-group": h.group, "data-state": state,
        "data-placed": opts.placed.has(h.name) ? "1" : null,
        "data-picked": opts.picked.includes(h.name) ? "1" : null,
      }, hostsG);
      title(r, h.name + ": " + state + (h.reason ? " (" + h.reason + ")" : ""));
    }
    for (const b of layout.blocks) drawBlock(hostsG, b, map, opts);
    drawOverlay(overlay, map, layout, opts);
    markSelection(opts);
    svg.dataset.width = String(layout.width);
    svg.dataset.trunksDrawn = String(drawnTrunks);
    svg.dataset.bands = String(bands.size);
    if (first) fit(layout); else applyView();
  }

  function drawRows(parent, layout, map) {
    const names = { 1: "leaf", 2: "spine", 3: "core" };
    for (let level = 1; level <= layout.maxLevel; level++) {
      el("text", { class: "row-label", x: 4, y: layout.rowY(level) + 10 }, parent).textContent =
        names[level] || "level " + level;
    }
    if (map.hosts.length) {
      el("text", { class: "row-label", x: 4, y: layout.hostsTop + 10 }, parent).textContent = "hosts";
    }
    for (const c of layout.columns) {
      if (c.group < 0 || layout.columns.length < 2) continue;
      el("text", { class: "group-label", x: c.x + c.w / 2, y: layout.rowY(Math.min(2, layout.maxLevel)) - 8 },
        parent).textContent = "SU " + (c.group + 1);
    }
  }

  function drawBand(parent, band, layout, map, opts) {
    const col = layout.columns.find((c) => c.group === band.group);
    const y1 = layout.rowY(band.lb) + layout.box + 2, y2 = layout.rowY(band.la) - 2;
    const x = col ? col.x : 0, w = col ? col.w : layout.width;
    const r = el("rect", {
      class: "band", x, y: Math.min(y1, y2), width: w, height: Math.max(4, Math.abs(y2 - y1)),
      fill: colour(band.value, opts.metric),
      "data-kind": "band", "data-group": band.group, "data-levels": band.la + "-" + band.lb,
      "data-state": "ok", "data-n": band.n, "data-trunks": band.trunks, "data-value": band.value,
    }, parent);
    title(r, (band.group >= 0 ? "SU " + (band.group + 1) + ": " : "") + band.trunks + " trunks, " +
      band.n + " cables, all ok; busiest " + metricText(band.value, opts.metric) + " (click to open)");
  }

  function drawBlock(parent, b, map, opts) {
    const by = { ok: 0, degraded: 0, faulty: 0, down: 0 };
    let state = "ok", placed = 0;
    for (const h of b.hosts) {
      by[h.state] = (by[h.state] || 0) + 1;
      state = worse(state, h.state);
      if (opts.placed.has(h.name)) placed++;
    }
    const g = el("g", {
      class: "host-block", "data-kind": "host-block", "data-group": b.group, "data-state": state,
      "data-hosts": b.hosts.length, "data-ok": by.ok, "data-degraded": by.degraded,
      "data-faulty": by.faulty, "data-down": by.down, "data-placed": placed || null,
    }, parent);
    el("rect", { class: "block", x: b.x, y: b.y, width: b.w, height: b.h, rx: 3 }, g);
    let x = b.x;
    for (const s of ["ok", "degraded", "faulty", "down"]) {
      if (!by[s]) continue;
      const w = (b.w * by[s]) / b.hosts.length;
      el("rect", { class: "bar", x, y: b.y + b.h - 8, width: w, height: 8, "data-state": s }, g);
      x += w;
    }
    el("text", { class: "block-label", x: b.x + 3, y: b.y + 13 }, g).textContent =
      b.hosts.length + " hosts";
    const bad = by.degraded + by.faulty + by.down;
    if (bad || placed) {
      el("text", { class: "block-label", x: b.x + 3, y: b.y + 25 }, g).textContent =
        (bad ? bad + " not ok" : "") + (placed ? (bad ? " · " : "") + placed + " placed" : "");
    }
    title(g, "SU " + (b.group + 1) + ": " + b.hosts.length + " hosts (" + by.ok + " ok, " + by.degraded +
      " degraded, " + by.faulty + " faulty, " + by.down + " down). Click to open.");
  }

  /// Placement hot links and route hops as lines over the map, between the switches (or the
  /// host) of their ends.
  function drawOverlay(parent, map, layout, opts) {
    const index = new Map(map.switches.map((s) => [s.guid, s.i]));
    const where = (end) => {
      if (index.has(end.guid)) {
        const p = layout.sw[index.get(end.guid)];
        return p && { x: p.x + layout.box / 2, y: p.y + layout.box / 2 };
      }
      if (end.host && layout.hosts.has(end.host)) {
        const p = layout.hosts.get(end.host);
        return { x: p.x + layout.hostBox / 2, y: p.y + layout.hostBox / 2 };
      }
      return null;
    };
    const line = (cls, from, to, attrs) => {
      const a = where(from), b = where(to);
      if (!a || !b) return;
      el("line", Object.assign({ class: cls, x1: a.x, y1: a.y, x2: b.x, y2: b.y }, attrs), parent);
    };
    for (const l of opts.hotLinks) {
      line("hot-link", l.from, l.to, { "data-kind": "hot-link", "data-a": l.from.guid, "data-b": l.to.guid,
        "data-value": l.utilization });
    }
    opts.route.forEach((hop, k) => {
      line("route-hop", hop.from, hop.to, { "data-kind": "route-hop", "data-a": hop.from.guid,
        "data-b": hop.to.guid, "data-hop": k });
    });
  }

  function markSelection(opts) {
    for (const key of [opts.selected, opts.found]) {
      if (!key) continue;
      const e = svg.querySelector(key);
      if (e) e.classList.add(key === opts.found ? "found" : "selected");
    }
  }

  /// Centres the view on the element matching `selector` (a search result) unless it is in view.
  function reveal(selector) {
    const e = svg.querySelector(selector);
    if (!e || !view) return;
    const b = e.getBBox();
    const inside = b.x >= view.x && b.y >= view.y && b.x + b.width <= view.x + view.w &&
      b.y + b.height <= view.y + view.h;
    if (inside) return;
    view.x = b.x + b.width / 2 - view.w / 2;
    view.y = b.y + b.height / 2 - view.h / 2;
    applyView();
  }

  function legend(container, map, metric) {
    const c = map.counts;
    const names = { util: "utilization", cong: "congestion (XmitWait share)", err: "error rate" };
    const stops = [0, 0.25, 0.5, 0.75, 1];
    const scale = stops.map((t) => {
      const v = metric === "cong" ? t * 0.2 : metric === "err" ? Math.pow(10, 2 * t) - 1 : t;
      return '<span class="swatch" data-colour="' + colour(v, metric) + '"></span>' + metricText(v, metric);
    }).join(" ");
    const states = ["ok", "degraded", "faulty", "down"].map((s) =>
      '<span class="state-key" data-state="' + s + '"></span>' + s + " " + ((c.cables_by_state || {})[s] || 0)).join(" ") +
      ' <span class="state-key" data-state="missing"></span>of them missing ' + (c.cables_missing || 0);
    container.innerHTML =
      '<div><b>' + names[metric] + ':</b> ' + scale + '</div>' +
      '<div><b>cables:</b> ' + states + '</div>';
    for (const s of container.querySelectorAll(".swatch")) s.style.background = s.dataset.colour;
  }

  return { init, render, legend, reveal, colour, trunkState, hostCables };
})();
