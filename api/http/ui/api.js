// The REST calls of the page, all to the daemon that served it (same origin, /api/v1).
"use strict";
window.IBF = window.IBF || {};
IBF.api = (() => {
  const base = "/api/v1";

  async function request(path, options) {
    const res = await fetch(base + path, options);
    let body = null;
    const type = res.headers.get("Content-Type") || "";
    if (type.startsWith("application/json")) body = await res.json();
    if (!res.ok) {
      const message = body && body.error ? body.error.message : res.statusText;
      const err = new Error(res.status + " " + message);
      err.status = res.status;
      err.body = body;
      throw err;
    }
    return { body, headers: res.headers };
  }

  const get = async (path) => (await request(path)).body;
  const post = async (path, value) =>
    (await request(path, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(value),
    })).body;
  const enc = encodeURIComponent;

  return {
    get,
    post,
    request,
    map: () => request("/fabric/map"),
    health: () => request("/health").catch((e) => {
      if (e.status === 503 && e.body) return { body: e.body };  // starting: same body
      throw e;
    }),
    events: (since, wait, limit) =>
      request("/events?since=" + since + "&limit=" + (limit || 500) + (wait ? "&wait=" + wait : "")),
    node: (guid) => get("/nodes/" + enc(guid)),
    host: (name) => get("/hosts/" + enc(name)),
    linksOf: (guid) => get("/links?node=" + enc(guid)),
    port: (guid, port) => get("/ports/" + enc(guid) + "/" + port),
    routes: (src, dst) => get("/routes?src=" + enc(src) + "&dst=" + enc(dst)),
    placement: (body) => post("/placement", body),
    pool: () => get("/pool"),
    poolAllocations: () => get("/pool/allocations"),
    jobs: () => get("/jobs"),
    jobFabric: (id) => get("/jobs/" + enc(id) + "/fabric?limit=20"),
  };
})();
