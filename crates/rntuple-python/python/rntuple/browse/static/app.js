// rntuple browse: the page. Plain JavaScript, no dependencies, no network
// beyond the server that sent it (or none: a static page carries its data in
// <script id="rntuple-data">). Tests read window.rntupleBrowse.
"use strict";
(function () {
  const $ = (sel) => document.querySelector(sel);
  const embedded = document.getElementById("rntuple-data");
  const STATIC = embedded !== null;
  const state = {
    summary: null, current: null, pages: {}, segments: [], regions: [],
    view: [0, 1], fieldSort: ["compressed", -1], valueStart: 0, valueCount: 20,
  };
  window.rntupleBrowse = state;

  // ---- helpers ------------------------------------------------------------
  function fmtBytes(n) {
    if (n === null || n === undefined) return "";
    const u = ["B", "KiB", "MiB", "GiB", "TiB"];
    let i = 0, v = n;
    while (v >= 1024 && i < u.length - 1) { v /= 1024; i++; }
    return (i === 0 ? String(Math.round(v)) : v.toFixed(v < 10 ? 2 : 1)) + " " + u[i];
  }
  const fmtInt = (n) => (n === null || n === undefined ? "" : Number(n).toLocaleString("en-US"));
  const fmtRatio = (r) => (r === null || r === undefined ? "–" : Number(r).toFixed(2));
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v; else if (k === "text") e.textContent = v;
      else if (k.startsWith("data-")) e.setAttribute(k, v); else e[k] = v;
    }
    for (const c of children) e.append(c);
    return e;
  }
  const svgEl = (tag, attrs) => {
    const e = document.createElementNS("http://www.w3.org/2000/svg", tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    return e;
  };
  function showError(text) { $("#errors").append(el("div", { class: "error", text })); }
  async function api(path, params) {
    const q = new URLSearchParams(params || {}).toString();
    const r = await fetch("api/" + path + (q ? "?" + q : ""));
    const body = await r.json();
    if (!r.ok) throw new Error(body.error || r.statusText);
    return body;
  }
  // A stable colour per field name (golden-angle hues).
  const palette = {};
  function colorOf(name) {
    if (!(name in palette)) palette[name] = `hsl(${(200 + Object.keys(palette).length * 137.508) % 360}, 62%, 58%)`;
    return palette[name];
  }
  const KIND_COLORS = {
    "file header": "#4b5563", "top directory": "#6b7280", "streamer info": "#9ca3af", "keys list": "#a8a29e",
    "free segments": "#d6d3d1", "key": "#cbd5e1", "anchor": "#111827", "header": "#dc2626", "footer": "#ea580c",
    "page list": "#ca8a04", "blob key header": "#94a3b8", "free gap": "#fde68a",
  };

  // ---- overview -----------------------------------------------------------
  function renderTabs() {
    const nav = $("#rntuple-tabs");
    nav.textContent = "";
    for (const r of state.summary.rntuples) {
      const b = el("button", { type: "button", text: r.name, "data-rntuple": r.name });
      if (state.current && r.name === state.current.name) b.classList.add("active");
      b.onclick = () => select(r.name);
      nav.append(b);
    }
  }
  function renderFacts(rep) {
    const dl = $("#facts");
    dl.textContent = "";
    if (!rep) return;
    const s = rep.sizes;
    const facts = [
      ["name", rep.name], ["entries", fmtInt(rep.num_entries)], ["format version", rep.format_version],
      ["writer", rep.writer], ["description", rep.description || "–"],
      ["fields", `${fmtInt(rep.num_top_level_fields)} top-level, ${fmtInt(rep.num_fields)} in all`],
      ["columns", `${fmtInt(rep.num_physical_columns)} physical, ${fmtInt(rep.num_alias_columns)} alias`],
      ["clusters", `${fmtInt(rep.num_clusters)} in ${fmtInt(rep.num_cluster_groups)} group(s)`],
      ["pages", fmtInt(rep.num_pages)],
      ["compressed / uncompressed", `${fmtBytes(s.pages.compressed)} / ${fmtBytes(s.pages.uncompressed)} (ratio ${fmtRatio(s.pages.compression_ratio)})`],
      ["header / footer", `${fmtBytes(s.header.compressed)} / ${fmtBytes(s.footer.compressed)}`],
      ["compression settings", rep.compression.join(", ") || "–"],
    ];
    for (const [k, v] of facts) dl.append(el("dt", { text: k }), el("dd", { text: String(v) }));
  }

  // ---- fields table and treemap -------------------------------------------
  function renderFields(rep) {
    const tbody = $("#fields-table tbody");
    tbody.textContent = "";
    if (!rep) return;
    const [key, dir] = state.fieldSort;
    const rows = rep.fields.slice().sort((a, b) => {
      const x = a[key], y = b[key];
      if (typeof x === "string") return dir * (x < y ? -1 : x > y ? 1 : 0);
      return dir * ((x ?? -1) - (y ?? -1));
    });
    for (const f of rows) {
      // A collection's projections and member types can run to hundreds of characters (an
      // imported NanoAOD's _collectionN): the cell says how many, the tooltip lists them.
      const projected = f.projections.map((p) => p.name);
      const nameTitle = projected.length ? `${f.name}\nprojected as: ${projected.join(", ")}` : f.name;
      const tr = el("tr", { "data-field": f.name, "data-compressed": f.compressed, "data-uncompressed": f.uncompressed },
        el("td", { class: "name", title: nameTitle }, el("span", { class: "swatch", style: `background:${colorOf(f.name)}` }), f.name,
          projected.length ? el("small", { class: "projections", text: ` +${projected.length} projected` }) : ""),
        el("td", { class: "type", text: shortType(f.type), title: f.type }), el("td", { class: "num", text: fmtInt(f.num_columns) }),
        el("td", { class: "num", text: fmtInt(f.num_pages) }),
        el("td", { class: "num", text: fmtBytes(f.compressed), title: fmtInt(f.compressed) + " B" }),
        el("td", { class: "num", text: fmtBytes(f.uncompressed), title: fmtInt(f.uncompressed) + " B" }),
        el("td", { class: "num", text: fmtRatio(f.compression_ratio) }),
        el("td", { class: "num", text: f.fraction === null ? "–" : (100 * f.fraction).toFixed(1) + " %" }));
      tr.onclick = () => { $("#value-field").value = f.name; state.valueStart = 0; loadValues(); };
      tbody.append(tr);
    }
    for (const th of document.querySelectorAll("#fields-table th[data-sort]")) {
      th.classList.toggle("sorted-asc", th.dataset.sort === key && dir > 0);
      th.classList.toggle("sorted-desc", th.dataset.sort === key && dir < 0);
    }
  }
  // A type name cut to its outer shape when long: "std::vector<Rec{a, b, ... 15 more}>".
  const TYPE_CHARS = 48;
  function shortType(t) {
    if (!t || t.length <= TYPE_CHARS) return t;
    const open = t.indexOf("<"), brace = t.indexOf("{");
    const cut = [open, brace].filter((i) => i > 0).sort((a, b) => a - b)[0];
    if (cut !== undefined && cut < TYPE_CHARS - 8) {
      const members = t.slice(cut + 1).split(/,\s*/).length;
      return `${t.slice(0, cut + 1)}… ${members} members${t[cut] === "<" ? ">" : "}"}`;
    }
    return t.slice(0, TYPE_CHARS - 1) + "…";
  }
  for (const th of document.querySelectorAll("#fields-table th[data-sort]")) {
    th.onclick = () => {
      const k = th.dataset.sort;
      state.fieldSort = [k, state.fieldSort[0] === k ? -state.fieldSort[1] : (k === "name" || k === "type" ? 1 : -1)];
      renderFields(state.current && state.current.report);
    };
  }

  // Squarified treemap (Bruls, Huizing, van Wijk 2000) of items {name, value}.
  function squarify(items, x, y, w, h) {
    const out = [];
    let rest = items.filter((d) => d.value > 0);
    const total = rest.reduce((s, d) => s + d.value, 0);
    if (!total) return out;
    const scale = (w * h) / total;
    const worst = (row, side) => {
      const s = row.reduce((a, d) => a + d.value * scale, 0);
      const mx = Math.max(...row.map((d) => d.value * scale)), mn = Math.min(...row.map((d) => d.value * scale));
      return Math.max((side * side * mx) / (s * s), (s * s) / (side * side * mn));
    };
    while (rest.length) {
      const side = Math.min(w, h);
      let row = [rest[0]], i = 1;
      while (i < rest.length && worst([...row, rest[i]], side) <= worst(row, side)) { row.push(rest[i]); i++; }
      rest = rest.slice(i);
      const area = row.reduce((a, d) => a + d.value * scale, 0);
      if (w >= h) {
        const rw = area / h; let yy = y;
        for (const d of row) { const rh = (d.value * scale) / rw; out.push({ ...d, x, y: yy, w: rw, h: rh }); yy += rh; }
        x += rw; w -= rw;
      } else {
        const rh = area / w; let xx = x;
        for (const d of row) { const rw = (d.value * scale) / rh; out.push({ ...d, x: xx, y, w: rw, h: rh }); xx += rw; }
        y += rh; h -= rh;
      }
    }
    return out;
  }
  function renderTreemap(rep) {
    const box = $("#treemap");
    box.textContent = "";
    if (!rep) return;
    const W = 960, H = 420;
    const svg = svgEl("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": "treemap of compressed bytes per field" });
    const items = rep.fields.map((f) => ({ name: f.name, value: f.compressed, type: f.type })).sort((a, b) => b.value - a.value);
    for (const r of squarify(items, 0, 0, W, H)) {
      const g = svgEl("g", {});
      const rect = svgEl("rect", { x: r.x, y: r.y, width: Math.max(0, r.w), height: Math.max(0, r.h), fill: colorOf(r.name),
        stroke: "#fff", "stroke-width": 1, "data-field": r.name, "data-bytes": r.value });
      const t = svgEl("title", {}); t.textContent = `${r.name} (${r.type}): ${fmtBytes(r.value)}`;
      rect.append(t);
      rect.onclick = () => { $("#value-field").value = r.name; state.valueStart = 0; loadValues(); };
      g.append(rect);
      if (r.w > 50 && r.h > 16) {
        const text = svgEl("text", { x: r.x + 4, y: r.y + 13 });
        text.textContent = r.name.length * 6.5 > r.w - 6 ? r.name.slice(0, Math.max(1, Math.floor((r.w - 6) / 6.5) - 1)) + "…" : r.name;
        g.append(text);
      }
      svg.append(g);
    }
    box.append(svg);
  }

  // ---- columns and clusters -----------------------------------------------
  function renderColumns(rep) {
    const tbody = $("#columns-table tbody");
    tbody.textContent = "";
    if (!rep) return;
    for (const c of rep.columns) {
      tbody.append(el("tr", { "data-column": c.id },
        el("td", { class: "num", text: c.id }), el("td", { text: c.field }), el("td", { text: c.type }),
        el("td", { text: c.encoding }), el("td", { class: "num", text: c.bits_on_storage }),
        el("td", { class: "num", text: fmtInt(c.num_elements) }), el("td", { class: "num", text: fmtInt(c.num_pages) }),
        el("td", { class: "num", text: fmtBytes(c.compressed) }), el("td", { class: "num", text: fmtBytes(c.uncompressed) }),
        el("td", { class: "num", text: fmtRatio(c.compression_ratio) }), el("td", { text: c.compression.join(", ") })));
    }
  }
  function renderClusters(entry) {
    const rep = entry.report;
    const gb = $("#groups-table tbody"), cb = $("#clusters-table tbody");
    gb.textContent = ""; cb.textContent = "";
    if (!rep) return;
    for (const g of rep.cluster_groups) {
      gb.append(el("tr", { "data-group": g.id }, el("td", { class: "num", text: g.id }), el("td", { class: "num", text: fmtInt(g.min_entry) }),
        el("td", { class: "num", text: fmtInt(g.entry_span) }), el("td", { class: "num", text: fmtInt(g.num_clusters) }),
        el("td", { class: "num", text: fmtInt(g.page_list.offset) }), el("td", { class: "num", text: fmtBytes(g.page_list.compressed) })));
    }
    rep.clusters.forEach((c, i) => {
      const ext = entry.extents[i] || [0, 0];
      const tr = el("tr", { "data-cluster": c.id }, el("td", { class: "num", text: c.id }), el("td", { class: "num", text: c.group }),
        el("td", { class: "num", text: fmtInt(c.first_entry) }), el("td", { class: "num", text: fmtInt(c.num_entries) }),
        el("td", { class: "num", text: fmtInt(c.num_pages) }), el("td", { class: "num", text: fmtBytes(c.compressed) }),
        el("td", { class: "num", text: fmtBytes(c.uncompressed) }), el("td", { class: "num", text: fmtInt(ext[0]) }),
        el("td", { class: "num", text: fmtInt(ext[1]) }));
      tr.onclick = () => { if (ext[1] > ext[0]) setView(ext[0], ext[1]); $("#bytemap-section").scrollIntoView(); };
      cb.append(tr);
    });
  }

  // ---- byte map -----------------------------------------------------------
  const ROWS = 16;
  function columnFields(rep) {
    const m = new Map();
    for (const c of rep.columns) m.set(c.id, c.top_level_field);
    return m;
  }
  // Segments over the whole file: container regions, then each RNTuple's
  // envelopes and pages (those loaded). Later layers are drawn on top.
  function buildSegments() {
    const s = state.summary, regions = [], top = [];
    for (const r of s.regions) {
      const kind = r.class === "ROOT::RNTuple" ? "anchor" : r.kind;
      regions.push({ kind, offset: r.offset, size: r.size, label: `${r.kind}${r.name ? " " + r.name : ""}${r.class ? " (" + r.class + ")" : ""}`, key_len: r.key_len });
    }
    for (const entry of s.rntuples) {
      const rep = entry.report;
      if (!rep) continue;
      const z = rep.sizes, tag = rep.name;
      top.push({ kind: "header", offset: z.header.offset, size: z.header.compressed, label: `header envelope of ${tag}`, extra: `uncompressed ${fmtInt(z.header.uncompressed)} B` });
      top.push({ kind: "footer", offset: z.footer.offset, size: z.footer.compressed, label: `footer envelope of ${tag}`, extra: `uncompressed ${fmtInt(z.footer.uncompressed)} B` });
      for (const g of rep.cluster_groups)
        top.push({ kind: "page list", offset: g.page_list.offset, size: g.page_list.compressed, label: `page list of cluster group ${g.id} of ${tag}`, extra: `uncompressed ${fmtInt(g.page_list.uncompressed)} B` });
      const fields = columnFields(rep), cols = new Map(rep.columns.map((c) => [c.id, c]));
      for (const recs of Object.values(state.pages[tag] || {})) {
        for (const [cluster, column, offset, size, checksum, elements] of recs) {
          const col = cols.get(column);
          top.push({ kind: "page", field: fields.get(column), offset, size: size + (checksum ? 8 : 0), payload: size,
            label: `page of ${col ? col.field : "column " + column} (${fields.get(column)})`,
            extra: `cluster ${cluster}, column ${column} ${col ? col.type : ""}, ${fmtInt(elements)} elements, ${fmtInt(size)} B${checksum ? " + 8 B checksum" : ""}`, rntuple: tag });
        }
      }
    }
    regions.sort((a, b) => a.offset - b.offset);
    top.sort((a, b) => a.offset - b.offset);
    state.regions = regions;
    state.segments = top;
  }
  function loadedPages(tag) {
    return state.pages[tag] || (state.pages[tag] = {});
  }
  function renderLegend() {
    const ul = $("#bytemap-legend");
    ul.textContent = "";
    const sums = new Map(), several = state.summary.rntuples.length > 1;
    const add = (kind, rntuple, field, color, n) => {
      const key = JSON.stringify([kind, rntuple, field]);
      const v = sums.get(key) || { kind, rntuple, field, color, bytes: 0 };
      v.bytes += n; sums.set(key, v);
    };
    for (const r of state.regions) add(r.kind, "", "", KIND_COLORS[r.kind] || "#ccc", r.size);
    for (const t of state.segments) {
      if (t.kind === "page") add("page", t.rntuple, t.field, colorOf(t.field), t.payload);
      else add(t.kind, "", "", KIND_COLORS[t.kind], t.size);
    }
    // Bytes no region or structure covers.
    const cover = [...state.regions, ...state.segments].map((x) => [x.offset, x.offset + x.size]).sort((a, b) => a[0] - b[0]);
    let covered = 0, end = 0;
    for (const [a, b] of cover) { if (b > end) { covered += b - Math.max(a, end); end = b; } }
    add("not in a listed structure", "", "", "#ffffff", Math.max(0, (state.summary.file_size || 0) - covered));
    for (const v of sums.values()) {
      const label = v.kind === "page" ? `pages of ${several ? v.rntuple + "/" : ""}${v.field}` : v.kind;
      ul.append(el("li", { "data-kind": v.kind, "data-rntuple": v.rntuple, "data-field": v.field, "data-bytes": v.bytes },
        el("span", { class: "swatch", style: `background:${v.color};border:1px solid #999` }), `${label}: ${fmtBytes(v.bytes)}`));
    }
  }
  function drawByteMap() {
    const canvas = $("#bytemap-canvas");
    const W = canvas.width, H = canvas.height, rowH = H / ROWS;
    const ctx = canvas.getContext("2d");
    ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, W, H);
    const [lo, hi] = state.view, span = Math.max(1, hi - lo), perPx = span / (W * ROWS);
    const paint = (offset, size, color) => {
      const a = Math.max(offset, lo), b = Math.min(offset + size, hi);
      if (b <= a) return;
      let p = (a - lo) / perPx; const q = Math.max(p + 1, (b - lo) / perPx);
      ctx.fillStyle = color;
      while (p < q) {
        const row = Math.floor(p / W), x = p - row * W, w = Math.min(q - p, W - x);
        if (row >= ROWS) break;
        ctx.fillRect(x, row * rowH, w, rowH - 1);
        p += w;
      }
    };
    for (const r of state.regions) paint(r.offset, r.size, KIND_COLORS[r.kind] || "#ccc");
    for (const t of state.segments) paint(t.offset, t.size, t.kind === "page" ? colorOf(t.field) : KIND_COLORS[t.kind]);
    // Where each structure starts, when it spans a few pixels: a thin dark mark.
    for (const t of [...state.regions, ...state.segments]) {
      if (t.size / perPx < 4 || t.offset < lo || t.offset >= hi) continue;
      const p = (t.offset - lo) / perPx, row = Math.floor(p / W);
      if (row >= ROWS) continue;
      ctx.fillStyle = "rgba(0, 0, 0, 0.35)";
      ctx.fillRect(p - row * W, row * rowH, 1, rowH - 1);
    }
    $("#bytemap-range").textContent = `bytes ${fmtInt(lo)} – ${fmtInt(hi)} (${fmtBytes(hi - lo)}, ${fmtBytes(span / ROWS)} per row)`;
  }
  function findAt(offset) {
    const hit = (list) => {
      let a = 0, b = list.length - 1, best = null;
      while (a <= b) { const m = (a + b) >> 1; if (list[m].offset <= offset) { best = m; a = m + 1; } else b = m - 1; }
      for (let i = best; i !== null && i >= 0 && i > best - 64; i--) if (list[i].offset <= offset && offset < list[i].offset + list[i].size) return list[i];
      return null;
    };
    return hit(state.segments) || hit(state.regions);
  }
  function offsetAt(ev) {
    const canvas = $("#bytemap-canvas"), rect = canvas.getBoundingClientRect();
    const x = ((ev.clientX - rect.left) / rect.width) * canvas.width, y = ((ev.clientY - rect.top) / rect.height) * canvas.height;
    const row = Math.floor(y / (canvas.height / ROWS));
    const [lo, hi] = state.view;
    return lo + ((row * canvas.width + x) * (hi - lo)) / (canvas.width * ROWS);
  }
  function setView(lo, hi) {
    const size = state.summary.file_size || 1;
    lo = Math.max(0, Math.floor(lo)); hi = Math.min(size, Math.ceil(hi));
    if (hi - lo < 64) { const mid = (lo + hi) / 2; lo = Math.max(0, Math.floor(mid - 32)); hi = Math.min(size, lo + 64); }
    state.view = [lo, hi];
    drawByteMap();
    loadPagesInView();
  }
  function zoom(factor, at) {
    const [lo, hi] = state.view;
    const c = at === undefined ? (lo + hi) / 2 : at, half = ((hi - lo) * factor) / 2;
    setView(c - half, c + half);
  }
  // Large RNTuples: page records of the clusters in view, when few enough.
  async function loadPagesInView() {
    if (STATIC) return;
    const [lo, hi] = state.view;
    const wanted = [];
    for (const entry of state.summary.rntuples) {
      if (!entry.report || entry.pages) continue;
      const have = loadedPages(entry.name);
      entry.extents.forEach((e, i) => {
        const id = entry.report.clusters[i].id;
        if (e[1] > lo && e[0] < hi && !(id in have)) wanted.push([entry.name, id]);
      });
    }
    if (!wanted.length || wanted.length > (state.summary.clusters_in_view || 16)) return;
    for (const [name, id] of wanted) {
      try { loadedPages(name)[id] = await api("pages", { rntuple: name, cluster: id }); }
      catch (e) { showError(`pages of cluster ${id}: ${e.message}`); return; }
    }
    buildSegments(); renderLegend(); drawByteMap();
  }
  (function wireByteMap() {
    const canvas = $("#bytemap-canvas"), tip = $("#tooltip");
    canvas.addEventListener("mousemove", (ev) => {
      if (!state.summary) return;
      const off = Math.floor(offsetAt(ev)), s = findAt(off);
      tip.hidden = false;
      tip.style.left = ev.clientX + 14 + "px"; tip.style.top = ev.clientY + 14 + "px";
      tip.textContent = s
        ? `${s.label}\noffset ${fmtInt(s.offset)}, ${fmtInt(s.size)} B (${fmtBytes(s.size)})${s.extra ? "\n" + s.extra : ""}\nbyte ${fmtInt(off)}`
        : `byte ${fmtInt(off)}: not in a listed structure`;
      state.hovered = s;
    });
    canvas.addEventListener("mouseleave", () => { tip.hidden = true; });
    canvas.addEventListener("wheel", (ev) => { ev.preventDefault(); zoom(ev.deltaY < 0 ? 0.5 : 2, offsetAt(ev)); }, { passive: false });
    $("#zoom-in").onclick = () => zoom(0.5);
    $("#zoom-out").onclick = () => zoom(2);
    $("#zoom-reset").onclick = () => setView(0, state.summary.file_size || 1);
  })();

  // ---- values and histogram -----------------------------------------------
  function renderValueFields(rep) {
    const sel = $("#value-field");
    sel.textContent = "";
    if (!rep) return;
    const seen = new Set();
    const add = (name, type) => { if (!seen.has(name)) { seen.add(name); sel.append(el("option", { value: name, text: `${name} (${type})` })); } };
    for (const f of rep.fields) {
      add(f.name, f.type);
      for (const p of f.projections) add(p.name, p.type);
    }
  }
  async function loadValues() {
    const field = $("#value-field").value, entry = state.current;
    const tbody = $("#values-table tbody");
    if (!field || !entry || !entry.report) return;
    const ticket = (state.valueTicket = (state.valueTicket || 0) + 1);
    let data;
    try {
      if (STATIC) {
        data = ((state.staticValues || {})[entry.name] || {})[field];
        if (!data) throw new Error("values of this field are not in this static page (use rntuple browse FILE)");
        if (data.error) throw new Error(data.error);
        state.valueStart = 0;
      } else {
        data = await api("values", { rntuple: entry.name, field, start: state.valueStart, count: state.valueCount });
      }
    } catch (e) {
      if (ticket !== state.valueTicket) return;
      tbody.textContent = ""; tbody.append(el("tr", {}, el("td", { colSpan: 2, class: "error", text: e.message }))); return;
    }
    if (ticket !== state.valueTicket) return;  // a later request superseded this one
    tbody.textContent = "";
    data.values.forEach((v, i) => {
      const text = JSON.stringify(v);
      tbody.append(el("tr", { "data-entry": data.start + i }, el("td", { class: "num", text: fmtInt(data.start + i) }),
        el("td", { class: "value", text: text.length > 400 ? text.slice(0, 400) + " …" : text })));
    });
    $("#values-range").textContent = `entries ${fmtInt(data.start)} – ${fmtInt(data.stop)} of ${fmtInt(data.num_entries)}`;
    $("#values-prev").disabled = STATIC || data.start <= 0;
    $("#values-next").disabled = STATIC || data.stop >= data.num_entries;
    state.values = data;
  }
  $("#value-field").onchange = () => { state.valueStart = 0; loadValues(); };
  $("#values-prev").onclick = () => { state.valueStart = Math.max(0, state.valueStart - state.valueCount); loadValues(); };
  $("#values-next").onclick = () => { state.valueStart += state.valueCount; loadValues(); };
  $("#histogram-button").onclick = async () => {
    const box = $("#histogram"), field = $("#value-field").value;
    box.textContent = "";
    if (STATIC) { box.append(el("div", { class: "error", text: "histograms are computed by the server: run rntuple browse FILE" })); return; }
    box.append(el("div", { text: `histogramming ${field}…` }));
    let h;
    try { h = await api("histogram", { rntuple: state.current.name, field, bins: $("#histogram-bins").value || 50 }); }
    catch (e) { box.textContent = ""; box.append(el("div", { class: "error", text: e.message })); return; }
    box.textContent = "";
    const W = 900, H = 300, P = 40, max = Math.max(1, ...h.counts), n = h.counts.length;
    const svg = svgEl("svg", { viewBox: `0 0 ${W} ${H}`, "data-field": h.field, "data-entries": h.entries });
    h.counts.forEach((c, i) => {
      const bw = (W - 2 * P) / n, bh = ((H - 2 * P) * c) / max;
      const r = svgEl("rect", { x: P + i * bw, y: H - P - bh, width: Math.max(0.5, bw - 0.5), height: bh, fill: "#2563eb", "data-count": c });
      const t = svgEl("title", {}); t.textContent = `[${h.edges[i]}, ${h.edges[i + 1]}): ${c}`; r.append(t);
      svg.append(r);
    });
    svg.append(svgEl("line", { x1: P, y1: H - P, x2: W - P, y2: H - P, stroke: "#333" }));
    const label = (x, y, s, anchor) => { const t = svgEl("text", { x, y, "font-size": 12, "text-anchor": anchor }); t.textContent = s; svg.append(t); };
    label(P, H - P + 16, String(Number(h.edges[0].toPrecision(4))), "start");
    label(W - P, H - P + 16, String(Number(h.edges[n].toPrecision(4))), "end");
    label(P, P - 8, `max ${max}`, "start");
    label(W - P, P - 8, `${h.field}: ${fmtInt(h.entries)} values, mean ${h.mean === null ? "–" : h.mean.toPrecision(5)}, std ${h.std === null ? "–" : h.std.toPrecision(5)}`, "end");
    box.append(svg);
    state.histogram = h;
  };

  // ---- selection and start ------------------------------------------------
  function select(name) {
    const entry = state.summary.rntuples.find((r) => r.name === name);
    state.current = entry;
    renderTabs();
    if (entry.error) showError(`RNTuple ${entry.name}: ${entry.error}`);
    const rep = entry.report;
    renderFacts(rep); renderFields(rep); renderTreemap(rep); renderColumns(rep); renderClusters(entry);
    renderValueFields(rep);
    if (rep && rep.fields.length) loadValues();
  }
  function start(summary) {
    state.summary = summary;
    $("#file-name").textContent = summary.file;
    $("#file-facts").textContent = summary.file_size === null ? "" : `${fmtInt(summary.file_size)} bytes (${fmtBytes(summary.file_size)})`;
    if (summary.error) showError(`stopped reading ${summary.file}: ${summary.error}`);
    if (summary.walk_stopped)
      $("#notes").textContent = `The key walk stopped early (the bytes after it show as not listed): ${summary.walk_stopped}`;
    for (const entry of summary.rntuples) if (entry.pages) loadedPages(entry.name).all = entry.pages;
    buildSegments(); renderLegend();
    state.view = [0, summary.file_size || 1];
    drawByteMap();
    loadPagesInView();
    // Open on the largest RNTuple (PHYSLITE's EventData, not its small DataHeader).
    const bytes = (r) => (r.report && r.report.sizes ? r.report.sizes.pages.compressed : -1);
    const largest = summary.rntuples.reduce((best, r) => (best === null || bytes(r) > bytes(best) ? r : best), null);
    if (largest) select(largest.name);
    else $("#facts").append(el("dd", { text: "no RNTuple could be read" }));
    $("#status").textContent = STATIC ? "static page (values: first entries only; no histograms)" : "ready";
    document.body.dataset.ready = "1";
  }
  if (STATIC) {
    // The static page has no server to histogram with: no button that cannot work.
    for (const id of ["histogram-button", "histogram-bins"]) { const b = $("#" + id); (b.closest("label") || b).remove(); }
    const data = JSON.parse(embedded.textContent);
    state.staticValues = data.values;
    start(data.summary);
  } else {
    api("summary").then(start).catch((e) => { showError(e.message); $("#status").textContent = "failed"; document.body.dataset.ready = "1"; });
  }
})();
