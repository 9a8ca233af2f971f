// Following the daemon: a long-poll on /api/v1/events (each answer starts the next request from
// its last_id), the fabric map fetched every few seconds and soon after any event, /health every
// few seconds. A link_down event marks its cable down at once (an override of the map by port),
// before the next map has it; link_up / link_recovered lift the mark, and so does a map rendered
// well after the event.
"use strict";
window.IBF = window.IBF || {};
IBF.live = (() => {
  const MAP_EVERY_MS = 5000;
  const HEALTH_EVERY_MS = 5000;
  const WAIT_S = 25;
  const OVERRIDE_MS = 30000;
  const DOWN = new Set(["link_down", "port_gone", "node_missing"]);
  const UP = new Set(["link_up", "link_active", "link_recovered", "node_returned"]);

  const overrides = new Map();  // "guid:port" -> state
  const overrideAt = new Map();
  let since = 0, onMap = null, onEvents = null, onHealth = null, mapTimer = null, stopped = false;

  function portsOf(e) {
    const keys = [e.guid + ":" + e.port];
    if (e.remote) keys.push(e.remote.guid + ":" + e.remote.port);
    return keys;
  }

  /// Applies events to the overrides; true when one changed what is drawn.
  function apply(events) {
    let changed = false;
    for (const e of events) {
      if (DOWN.has(e.type)) {
        for (const k of portsOf(e)) { overrides.set(k, "down"); overrideAt.set(k, Date.now()); }
        changed = true;
      } else if (UP.has(e.type)) {
        for (const k of portsOf(e)) { overrides.delete(k); overrideAt.delete(k); }
        changed = true;
      }
    }
    return changed;
  }

  function expire() {
    const now = Date.now();
    for (const [k, at] of overrideAt) {
      if (now - at > OVERRIDE_MS) { overrides.delete(k); overrideAt.delete(k); }
    }
  }

  async function fetchMap() {
    clearTimeout(mapTimer);
    try {
      const { body, headers } = await IBF.api.map();
      expire();
      onMap(body, headers);
    } catch (e) {
      if (e.status !== 503) console.warn("map:", e.message);
    }
    if (!stopped) mapTimer = setTimeout(fetchMap, MAP_EVERY_MS);
  }
  const soon = () => { clearTimeout(mapTimer); mapTimer = setTimeout(fetchMap, 300); };

  async function poll() {
    while (!stopped) {
      try {
        const { body, headers } = await IBF.api.events(since, WAIT_S);
        since = body.last_id;
        if (body.events.length) {
          if (apply(body.events)) onMap(null);  // redraw with the overrides now
          onEvents(body.events);
          soon();
        }
        if (headers.get("Retry-After")) await new Promise((r) => setTimeout(r, 1000));
      } catch (e) {
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  }

  async function health() {
    try {
      onHealth((await IBF.api.health()).body);
    } catch (e) {
      onHealth(null, e);
    }
    if (!stopped) setTimeout(health, HEALTH_EVERY_MS);
  }

  /// Starts following. lastEventId: the map's X-Last-Event-Id (the recent events before it are
  /// loaded for the panel, the feed starts after it).
  async function start(callbacks, lastEventId) {
    ({ onMap, onEvents, onHealth } = callbacks);
    since = lastEventId;
    try {
      const recent = await IBF.api.events(Math.max(0, lastEventId - 200), 0, 200);
      if (recent.body.events.length) onEvents(recent.body.events);
      since = Math.max(since, recent.body.last_id);
    } catch (e) { /* the feed below retries */ }
    poll();
    health();
    mapTimer = setTimeout(fetchMap, MAP_EVERY_MS);
  }

  return { start, overrides, fetchMap, apply };
})();
