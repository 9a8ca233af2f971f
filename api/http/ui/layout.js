// Map layout: where every switch, host group and host goes. Switches in rows by level (the
// highest on top), leaves and spines in one column per leaf group (scalable unit) with the
// leaves by rail, switches without a group (the cores) spread over the whole width; the hosts of
// a group under its leaves, one by one when the group is open (or the fabric is small), else as
// one block with the hosts counted by health. Pure: data in, positions out.
"use strict";
window.IBF = window.IBF || {};
IBF.layout = (() => {
  const CELL = 16;        // a switch's slot (box + gap)
  const BOX = 12;         // a switch's box
  const HOST_CELL = 11;   // a host's slot
  const HOST_BOX = 8;
  const GROUP_GAP = 28;
  const ROW_GAP = 130;
  const TOP = 40;
  const LEFT = 60;
  const SMALL_HOSTS = 256;   // up to this many hosts every host is drawn
  const BLOCK_H = 36;

  const byName = (a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

  /// { width, height, sw: [{x,y}], columns: [...], hosts: Map name -> {x,y}, blocks: [...] }.
  /// aspect: width / height of the pane; rows are spaced so a wide fabric still fills it.
  function compute(map, openGroups, aspect) {
    const switches = map.switches;
    const maxLevel = Math.max(1, map.max_level);
    const groups = new Map();  // group -> {leaves: [], spines: [], hosts: []}
    const loose = new Map();   // level -> switches without a group
    const column = (g) => {
      if (!groups.has(g)) groups.set(g, { leaves: [], spines: [], hosts: [] });
      return groups.get(g);
    };
    for (const s of switches) {
      if (s.group >= 0 && s.level >= 1 && s.level <= 2) {
        column(s.group)[s.level === 1 ? "leaves" : "spines"].push(s);
      } else {
        const level = s.level >= 1 ? s.level : maxLevel;
        if (!loose.has(level)) loose.set(level, []);
        loose.get(level).push(s);
      }
    }
    for (const h of map.hosts) column(h.group).hosts.push(h);
    const allOpen = map.hosts.length <= SMALL_HOSTS;
    // Columns left to right, then the width, then the rows' spacing from it.
    const columns = [];
    let x = LEFT;
    for (const g of [...groups.keys()].sort((a, b) => a - b)) {
      const col = groups.get(g);
      col.leaves.sort((a, b) => a.rail - b.rail || byName(a, b));
      col.spines.sort(byName);
      col.hosts.sort(byName);
      const open = allOpen || openGroups.has(g);
      let w = Math.max(col.leaves.length, col.spines.length, 2) * CELL;
      if (open && col.hosts.length) w = Math.max(w, Math.min(col.hosts.length, 32) * HOST_CELL);
      columns.push({ group: g, x, w, open, leaves: col.leaves, spines: col.spines, hosts: col.hosts });
      x += w + GROUP_GAP;
    }
    let width = Math.max(x, LEFT + 200);
    for (const list of loose.values()) width = Math.max(width, LEFT + CELL * list.length);
    const rowGap = Math.max(ROW_GAP, Math.min(width / Math.max(1, aspect || 2) / (maxLevel + 1.2), 12 * ROW_GAP));
    const rowY = (level) => TOP + (maxLevel - Math.max(1, level)) * rowGap;
    const sw = new Array(switches.length);
    const hosts = new Map();
    const blocks = [];
    const hostsTop = rowY(1) + Math.min(rowGap * 0.75, ROW_GAP);
    let bottom = rowY(1) + BOX;
    for (const c of columns) {
      const place = (list, y) => list.forEach((s, k) => {
        const offset = (c.w - list.length * CELL) / 2;
        sw[s.i] = { x: c.x + offset + k * CELL + (CELL - BOX) / 2, y };
      });
      place(c.leaves, rowY(1));
      place(c.spines, rowY(2));
      if (c.hosts.length && c.open) {
        const perRow = Math.max(1, Math.floor(c.w / HOST_CELL));
        c.hosts.forEach((h, k) => {
          hosts.set(h.name, { x: c.x + (k % perRow) * HOST_CELL, y: hostsTop + Math.floor(k / perRow) * HOST_CELL });
        });
        bottom = Math.max(bottom, hostsTop + Math.ceil(c.hosts.length / perRow) * HOST_CELL);
      } else if (c.hosts.length) {
        blocks.push({ group: c.group, x: c.x, y: hostsTop, w: c.w, h: BLOCK_H, hosts: c.hosts });
        bottom = Math.max(bottom, hostsTop + BLOCK_H);
      }
    }
    for (const [level, list] of loose) {
      list.sort(byName);
      const step = Math.max(CELL, (width - LEFT) / Math.max(1, list.length));
      list.forEach((s, k) => { sw[s.i] = { x: LEFT + k * step + (step - BOX) / 2, y: rowY(level) }; });
    }
    return {
      width: width + LEFT, height: bottom + 40, sw, columns, hosts, blocks,
      box: BOX, hostBox: HOST_BOX, rowY, maxLevel, allOpen, hostsTop,
    };
  }

  return { compute, BOX, HOST_BOX };
})();
