// spark-jax serve: fills the page from the JSON endpoints and polls them for live updates.
// Every value goes into the document as text (textContent), never as markup: program text
// and LLM output are untrusted.
"use strict";
(function () {
  const POLL_MS = 1500;
  const app = document.getElementById("app");
  const live = document.getElementById("live");
  const params = new URLSearchParams(location.search);
  const kind = document.body.dataset.page;
  const charts = {};
  let lastText = null;

  function el(tag, attrs, ...kids) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined) continue;
      if (k === "class") node.className = v;
      else if (k === "href") node.setAttribute("href", safeHref(v));
      else node.setAttribute(k, String(v));
    }
    for (const kid of kids.flat()) {
      if (kid === null || kid === undefined) continue;
      node.appendChild(kid instanceof Node ? kid : document.createTextNode(String(kid)));
    }
    return node;
  }
  function safeHref(v) {
    const s = String(v);
    return s.startsWith("/") && !s.startsWith("//") ? s : "#";
  }
  function q(obj) { return new URLSearchParams(obj).toString(); }
  function num(v, d) { return v === null || v === undefined ? "—" : Number(v).toFixed(d === undefined ? 4 : d); }
  // OOD scores: percent with 2 decimals, as report.md and the CLI print them.
  function ood(v) { return v === null || v === undefined ? "—" : (100 * v).toFixed(2) + "%"; }
  // MACs in K with 1 decimal, as report.md.
  function kmacs(v) { return v === null || v === undefined ? "—" : (v / 1000).toFixed(1) + " K"; }
  function pcts(xs) { return xs.map((v) => (v === null || v === undefined ? v : 100 * v)); }
  function pct(v) { return v === null || v === undefined ? "—" : (100 * v).toFixed(1) + "%"; }
  function compareLink(path) { return el("a", { href: "/compare?" + q({ path }) }, path || "(root)"); }
  function runLink(path, text) { return el("a", { href: "/run?" + q({ path }) }, text || path || "(root)"); }
  function propLink(path, attempt, text) {
    return el("a", { href: "/proposal?" + q({ path, attempt }) }, text === undefined ? "#" + attempt : text);
  }
  function table(head, rows, cls) {
    return el("table", { class: cls || "grid" },
      el("thead", {}, el("tr", {}, head.map((h) => el("th", {}, h)))),
      el("tbody", {}, rows.map((r) => el("tr", {}, r.map((c) => el("td", {}, c))))));
  }
  function section(title, ...kids) { return el("section", {}, el("h2", {}, title), ...kids); }
  function replace(node, ...kids) { node.replaceChildren(...kids.flat().filter((k) => k)); }
  function pre(text, cls) { return el("pre", { class: cls || "code" }, text === null ? "(none)" : text); }

  // Blocks of a report's own Markdown (verdict lines, tables, notes), cut by the server:
  // shown as text, with the report's `code` and **strong** marks as elements.
  function inline(text) {
    return String(text).split(/(`[^`]+`|\*\*[^*]+\*\*)/).filter((p) => p !== "").map((p) =>
      p.startsWith("`") && p.endsWith("`") && p.length > 1 ? el("code", {}, breakable(p.slice(1, -1)))
        : p.startsWith("**") && p.endsWith("**") && p.length > 3 ? el("strong", {}, inline(p.slice(2, -2)))
          : breakable(p));
  }
  // Text with a line-break opportunity (<wbr>, no character) after each '_', '/' and ':', so
  // long task names and paths wrap in a narrow window; numbers never break.
  function breakable(text) {
    const frag = document.createDocumentFragment();
    String(text).split(/(?<=[_/:])/).forEach((part, i) => {
      if (i) frag.appendChild(document.createElement("wbr"));
      frag.appendChild(document.createTextNode(part));
    });
    return frag;
  }
  function blocksView(blocks, cls) {
    return (blocks || []).map((b) => b.table ? wrap(el("table", { class: "grid " + (cls || "") },
      el("thead", {}, el("tr", {}, b.table.head.map((h) => el("th", {}, inline(h))))),
      el("tbody", {}, b.table.rows.map((r) => el("tr", {}, r.map((c) => el("td", {}, inline(c))))))))
      : b.items ? el("ul", { class: "notes" }, b.items.map((i) => el("li", {}, inline(i))))
        : b.heading ? el("h3", {}, inline(b.heading))
          : el("p", { class: "verdict-text" }, inline(b.text)));
  }
  // The paper's published rows, as report.md gives them (not measured here), folded.
  function reference(blocks) {
    if (!blocks || !blocks.length) return null;
    return section("Paper reference rows (published figures, not measured here)", el("details", { id: "reference" },
      el("summary", {}, "the paper's rows, each with its source and whether its protocol is this one's"),
      blocksView(blocks)));
  }
  function wrap(node) { return el("div", { class: "scroll" }, node); }
  // A two-column table, one row per figure (long format: fits a narrow window).
  function facts(pairs, cls) {
    return wrap(el("table", { class: "grid facts " + (cls || "") }, el("tbody", {},
      pairs.filter((p) => p).map(([k, v]) => el("tr", {}, el("th", {}, k), el("td", {}, v))))));
  }
  // A score in its family's unit: percent for accuracies, CartPole's return by its name.
  function score(v, m) {
    if (v === null || v === undefined) return "—";
    m = m || METRIC_CLRS;
    return (m.scale * v).toFixed(m.digits) + (m.unit === "%" ? " %" : "");
  }
  const METRIC_CLRS = { name: "OOD accuracy", scale: 100, unit: "%", digits: 2 };
  function metricLabel(m) { return m.name + (m.unit === "%" ? " (%)" : ""); }
  function setLabel(s) {
    return s === "ood_val" ? "selection set (ood_val: validation, what the search selected on)"
      : "test set (ood_test: the search selected on it, so the best's score is optimistic)";
  }
  function hours(v) { return v === null || v === undefined ? "—" : Number(v).toFixed(3) + " h"; }

  // ------------------------------------------------------------------ charts
  const COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"];
  const DASHES = [[], [6, 3], [2, 3], [8, 3, 2, 3], [1, 2], [12, 4]];
  function chartWidth(box) {
    const w = (box.parentNode && box.parentNode.clientWidth) || window.innerWidth;
    return Math.max(260, Math.min(560, w - 12));
  }
  // A vertical dashed line at x = marker.x, labelled (the budget), drawn after the series.
  function markerPlugin(marker) {
    return { hooks: { draw: [(u) => {
      if (!marker || marker.x === null || marker.x === undefined) return;
      const x = u.valToPos(marker.x, "x", true);
      const ctx = u.ctx, top = u.bbox.top, bottom = u.bbox.top + u.bbox.height;
      ctx.save();
      ctx.strokeStyle = "#b3261e"; ctx.setLineDash([5, 4]); ctx.lineWidth = 1.5 * devicePixelRatio;
      ctx.beginPath(); ctx.moveTo(x, top); ctx.lineTo(x, bottom); ctx.stroke();
      ctx.setLineDash([]); ctx.fillStyle = "#b3261e";
      ctx.font = `${11 * devicePixelRatio}px system-ui, sans-serif`;
      ctx.textAlign = x > u.bbox.left + u.bbox.width / 2 ? "right" : "left";
      ctx.fillText(marker.label, x + (ctx.textAlign === "left" ? 4 : -4) * devicePixelRatio, top + 12 * devicePixelRatio);
      ctx.restore();
    }] } };
  }
  // opts: xlabel, ylabel, yrange (fixed; else auto-scaled to the data with a margin), bands,
  // marker {x, label}, hide (series indices left out of the legend).
  function chart(id, title, series, data, opts) {
    opts = opts || {};
    let box = document.getElementById(id);
    const points = data.length > 1 ? data[1].filter((v) => v !== null).length : 0;
    const key = series.map((s) => s.label).join("|") + "|" + JSON.stringify(opts.marker || null);
    if (charts[id] && charts[id].key === key) {
      charts[id].u.setData(data);
    } else {
      if (charts[id]) charts[id].u.destroy();
      replace(box);
      const u = new uPlot({
        title, width: chartWidth(box), height: 240,
        legend: { live: false },
        plugins: [markerPlugin(opts.marker)],
        scales: {
          x: { time: false },
          y: opts.yrange ? { range: opts.yrange } : { range: (u, lo, hi) => autoRange(lo, hi) },
        },
        axes: [{ label: opts.xlabel || "", incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000] },
          { label: opts.ylabel || "" }],
        series: [{ label: opts.xlabel || "x" }].concat(series.map((s, i) => Object.assign(
          { stroke: COLORS[i % COLORS.length], width: 2, spanGaps: false }, s))),
        bands: opts.bands || [],
      }, data, box);
      const hidden = new Set(opts.hide || []);
      u.root.querySelectorAll(".u-legend .u-series").forEach((row) => {
        if (hidden.has(row.textContent.trim())) row.style.display = "none";
      });
      charts[id] = { u, key };
    }
    const xs = data[0];
    const last = xs.length ? xs[xs.length - 1] : 0;
    const mx = opts.marker && opts.marker.x !== null && opts.marker.x !== undefined ? opts.marker.x : 0;
    charts[id].u.setScale("x", { min: xs.length ? Math.min(0, xs[0]) : 0, max: Math.max(4, last, mx) });
    box.dataset.points = String(points);
    if (opts.marker) box.dataset.marker = String(opts.marker.x);
  }
  // The data's range with a 10% margin (at least 1 unit), so 25 % and 35 % stand apart.
  function autoRange(lo, hi) {
    if (lo === null || hi === null || lo === undefined || hi === undefined) return [0, 1];
    const pad = Math.max((hi - lo) * 0.1, Math.abs(hi) * 0.02, 0.01);
    return [lo - pad, hi + pad];
  }
  function chartBox(id) { return el("div", { id, class: "chart", "data-points": "0" }); }

  // Per-task bars (mean over seeds) with one dot per seed, one colour per program: SVG built
  // as elements (no markup), scaled to the window's width.
  const SVG = "http://www.w3.org/2000/svg";
  function svg(tag, attrs, ...kids) {
    const node = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
    for (const kid of kids.flat()) if (kid) node.appendChild(kid instanceof Node ? kid : document.createTextNode(String(kid)));
    return node;
  }
  const DECISION_MARK = { win: "W", loss: "L", equivalent: "=", identical: "≡", "cannot tell": "?", pending: "…" };
  function taskBars(d) {
    const tasks = d.tasks, progs = d.table;
    const W = Math.max(420, 56 * tasks.length + 150), H = 370, left = 44, bottom = 150, top = 24;
    const ph = H - top - bottom, gw = (W - left - 110) / Math.max(1, tasks.length);
    const bw = Math.min(28, (gw * 0.8) / Math.max(1, progs.length));
    const all = progs.flatMap((p) => p.cells.flatMap((c) => (c && c.scores) || []));
    const ymax = Math.min(100, Math.max(10, Math.ceil((Math.max(0, ...all) * 1.1) / 10) * 10));
    const y = (v) => top + ph - (ph * v) / ymax;
    const g = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "bars", role: "img",
      "aria-label": `${d.metric_name || "OOD accuracy"} by task, one bar per program, one dot per seed` });
    for (let t = 0; t <= ymax; t += ymax > 50 ? 20 : 10) {
      g.appendChild(svg("line", { x1: left, x2: left + gw * tasks.length, y1: y(t), y2: y(t), class: "gridline" }));
      g.appendChild(svg("text", { x: left - 4, y: y(t) + 4, "text-anchor": "end", class: "tick" }, String(t)));
    }
    g.appendChild(svg("text", { x: 12, y: top + ph / 2, transform: `rotate(-90 12 ${top + ph / 2})`,
      "text-anchor": "middle", class: "tick" }, "OOD %"));
    tasks.forEach((task, ti) => {
      const x0 = left + ti * gw + (gw - bw * progs.length) / 2;
      progs.forEach((p, pi) => {
        const c = p.cells[ti], color = COLORS[pi % COLORS.length], x = x0 + pi * bw;
        if (c && c.n) {
          g.appendChild(svg("rect", { x, y: y(c.mean), width: bw - 2, height: Math.max(0, y(0) - y(c.mean)),
            fill: color, "fill-opacity": 0.45, stroke: color, class: "bar" },
            svg("title", {}, `${p.label} · ${task}: mean ${num(c.mean, 2)} % over ${c.n} seed(s)`)));
          c.scores.forEach((v, k) => g.appendChild(svg("circle", { cx: x + (bw - 2) / 2 + ((k % 3) - 1) * 3,
            cy: y(v), r: 2.6, fill: color, stroke: "#fff", "stroke-width": 0.6, class: "seed-dot" },
            svg("title", {}, `${p.label} · ${task} · seed ${c.seeds[k]}: ${num(v, 2)} %`))));
        }
      });
      const cx = left + ti * gw + gw / 2;
      g.appendChild(svg("text", { x: cx, y: top + ph + 12, transform: `rotate(40 ${cx} ${top + ph + 12})`,
        class: "tick" }, task));
      // each compared program's verdict or decision on this task, in its colour, above the bars
      progs.forEach((p, pi) => {
        const word = ((d.decisions || {})[p.label] || {})[task];
        if (!word) return;
        g.appendChild(svg("text", { x: x0 + pi * bw + (bw - 2) / 2, y: 16, "text-anchor": "middle",
          class: "decision", fill: COLORS[pi % COLORS.length] }, DECISION_MARK[word] || "?",
        svg("title", {}, `${p.label} vs ${d.baseline} on ${task}: ${word}`)));
      });
    });
    const legend = el("div", { class: "legend" }, progs.map((p, i) => el("span", {},
      el("span", { class: "swatch", style: `background:${COLORS[i % COLORS.length]}` }), p.label)),
      el("span", { class: "axis" }, "bar: mean over seeds · dot: one seed · above the bars, each program's " +
        "verdict against the baseline: W win, L loss, = equivalent, ≡ identical, ? cannot tell, … pending"));
    return el("div", { class: "chart bars-box", id: "c-bench-bars", "data-points": String(all.length) }, g, legend);
  }

  // The paper's published bars beside ours (the server's `paper_figure`): one group per task,
  // ours solid in the program's colour, the paper's hatched grey, each published bar labelled
  // with its source and protocol; never one series with ours. Horizontal: fits 800 px.
  function paperFigure(f, id) {
    if (!f) return null;
    const W = 640, labelW = 300, valueW = 56, rowH = 15, headH = 20, barW = W - labelW - valueW - 8;
    const all = f.groups.flatMap((g) => g.ours.concat(g.published).map((b) => b.value));
    const top = f.top || 100, pc = f.percent === false ? "" : " %";
    const xmax = Math.min(top, Math.max(top / 10, Math.ceil((Math.max(0, ...all) * 1.05) / (top / 10)) * (top / 10)));
    const step = xmax > 200 ? 100 : xmax > 50 ? 20 : 10;
    const rows = f.groups.reduce((n, g) => n + g.ours.length + g.published.length, 0);
    const H = 26 + f.groups.length * headH + rows * rowH;
    const x = (v) => labelW + (barW * Math.max(0, v)) / xmax;
    const colorOf = {};
    f.groups.forEach((g) => g.ours.forEach((b) => {
      if (!(b.name in colorOf)) colorOf[b.name] = COLORS[Object.keys(colorOf).length % COLORS.length];
    }));
    const g = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "bars paper-bars", role: "img",
      "aria-label": `${f.unit}: ours beside the paper's published figures (${f.sources.join("; ")})` },
    svg("defs", {}, svg("pattern", { id: id + "-hatch", width: 5, height: 5, patternUnits: "userSpaceOnUse",
      patternTransform: "rotate(45)" }, svg("rect", { width: 5, height: 5, fill: "#e8e8e8" }),
    svg("line", { x1: 0, y1: 0, x2: 0, y2: 5, stroke: "#777", "stroke-width": 2 }))));
    for (let t = 0; t <= xmax; t += step) {
      g.appendChild(svg("line", { x1: x(t), x2: x(t), y1: 14, y2: H, class: "gridline" }));
      g.appendChild(svg("text", { x: x(t), y: 11, "text-anchor": "middle", class: "tick" }, String(t)));
    }
    let y = 18;
    f.groups.forEach((grp) => {
      g.appendChild(svg("text", { x: 2, y: y + 14, class: "group" }, grp.label));
      y += headH;
      grp.ours.forEach((b) => {
        const color = colorOf[b.name];
        g.appendChild(svg("text", { x: labelW - 6, y: y + 11, "text-anchor": "end", class: "tick" }, "ours · " + b.name));
        g.appendChild(svg("rect", { x: labelW, y: y + 2, width: x(b.value) - labelW, height: rowH - 4, fill: color,
          "fill-opacity": 0.55, stroke: color, class: "ours-bar" },
        svg("title", {}, `ours: ${b.name}: ${num(b.value, 2)}${pc}` + (b.n ? ` (mean over ${b.n})` : ""))));
        g.appendChild(svg("text", { x: x(b.value) + 4, y: y + 11, class: "tick" }, num(b.value, 2)));
        y += rowH;
      });
      grp.published.forEach((b) => {
        g.appendChild(svg("text", { x: labelW - 6, y: y + 11, "text-anchor": "end", class: "tick published" },
          "published · " + b.name + (b.protocol === "paper" ? "" : " (its own protocol)")));
        g.appendChild(svg("rect", { x: labelW, y: y + 2, width: x(b.value) - labelW, height: rowH - 4,
          fill: `url(#${id}-hatch)`, stroke: "#555", class: "paper-bar", "data-source": b.source, "data-protocol": b.protocol },
        svg("title", {}, `published, not measured here: ${b.name} ${num(b.value, 2)}${pc} · ${b.source} · ` +
          `protocol ${b.protocol}` + (b.comparable ? " (this page's protocol)" : " (not this page's protocol)"))));
        g.appendChild(svg("text", { x: x(b.value) + 4, y: y + 11, class: "tick" }, num(b.value, 2)));
        y += rowH;
      });
    });
    const others = f.groups.some((grp) => grp.published.some((b) => b.protocol !== "paper"));
    return section("Beside the paper's published figures",
      el("div", { class: "chart bars-box paper-figure", id, "data-published": String(f.groups.reduce(
        (n, grp) => n + grp.published.length, 0)), "data-ours": String(f.groups.reduce((n, grp) => n + grp.ours.length, 0)) },
      el("p", { class: "axis" }, f.title),
      g,
      el("div", { class: "legend" },
        el("span", {}, el("span", { class: "swatch", style: "background:#1f77b4" }),
          `ours (solid, one colour each): measured here, ${f.preset} protocol`),
        el("span", {}, el("span", { class: "swatch hatch" }), "published, protocol `paper`" +
          (others ? " unless the bar says its own" : "") + " (the paper's numbers, not measured here)")),
      el("p", { class: "axis source" }, "Published bars: " + f.sources.join("; ") + ". " +
        f.protocols.map((p) => p + ".").join(" ") + " Ours: this page's runs under the " + f.preset + " protocol; " +
        (f.groups.some((grp) => grp.published.some((b) => b.comparable)) ? "some published rows share it."
          : "no published row shares it: the paper's bars are targets, not comparable numbers."))));
  }

  // ------------------------------------------------------------------ pages
  function renderIndex(d) {
    const grouped = new Set((d.comparisons || []).flatMap((c) => c.members || []));
    const byPath = {};
    for (const r of d.runs) byPath[r.path] = r;
    const runRow = (r) => [runLink(r.path), r.task, r.preset, r.method, r.editor,
      r.budget === undefined ? "—" : `${r.budget_used}/${r.budget} evaluated (seed incl.), ${r.attempts}/${r.max_attempts} attempts`,
      r.metric ? score(r.best_ood, r.metric) : "—", el("span", { class: "status " + r.status }, r.status + (r.error ? ": " + r.error : ""))];
    const runHead = ["run", "task", "preset", "method", "editor", "budget used", "best-so-far score (selection set, seed incl.)", "status"];
    const runs = d.runs.filter((r) => !grouped.has(r.path)).map(runRow);
    const benches = d.benchmarks.map((b) => [el("a", { href: "/benchmark?" + q({ path: b.path }) }, b.path || "(root)"),
      (b.programs || []).join(", "), b.tasks, b.landed, b.error || ""]);
    const comps = (d.comparisons || []).map((c) => el("div", { class: "comparison" },
      el("h3", {}, compareLink(c.path)),
      c.error ? el("p", { class: "error" }, c.error) : el("p", {}, `${c.task}, ${c.preset} preset; methods ${(c.methods || []).join(", ")}; ` +
        `search seeds ${(c.seeds || []).join(", ")}; budget ${c.budget}; runs with a database ${c.runs_with_db}/${c.expected}` +
        (c.status === "report only" ? " (report only: this folder keeps the comparison's report.md, not its run databases)" : "")),
      (c.members || []).length ? wrap(table(runHead, c.members.map((m) => byPath[m] ? runRow(byPath[m]) : [runLink(m)].concat(runHead.slice(1).map(() => ""))), "grid runs members")) : null));
    replace(app,
      section("Runs", runs.length ? wrap(table(runHead, runs, "grid runs"))
        : el("p", {}, grouped.size ? "Every run under the served root belongs to a comparison (below)."
          : "No run directories (holding run.db) under the served root yet.")),
      section("Benchmarks", benches.length ? wrap(table(["benchmark", "programs", "tasks", "results landed", "note"], benches))
        : el("p", {}, "No benchmark directories (holding benchmark.db).")),
      section("Comparisons (each with its member searches)", comps.length ? el("div", { class: "comparisons" }, comps)
        : el("p", {}, "No comparison directories (holding compare.json, written by spark-jax compare).")));
  }

  function renderRun(d) {
    const r = d.run, m = r.metric || METRIC_CLRS, set = setLabel(r.selection_set);
    if (!document.getElementById("c-best")) {
      replace(app, el("div", { id: "summary" }), el("div", { id: "outcome" }), el("div", { id: "run-paper" }),
        el("div", { id: "search" }),
        section("Best so far", el("div", { class: "charts" }, chartBox("c-best"), chartBox("c-best-eval"))),
        section("Rates and factors", el("div", { class: "charts" }, chartBox("c-rates"), chartBox("c-factors"))),
        el("div", { id: "failures" }), el("div", { id: "archive" }), el("div", { id: "lineage" }),
        el("div", { id: "attempts" }), el("div", { id: "run-reference" }));
    }
    const o = d.outcome || {};
    replace(document.getElementById("run-reference"), reference(o.reference));
    replace(document.getElementById("run-paper"), paperFigure(o.paper_figure, "c-run-paper"));
    replace(document.getElementById("summary"), el("h1", {}, "Run ", r.path || "(root)"),
      el("p", {}, `${o.protocol || ""} · `, el("span", { class: "status " + r.status }, r.status)));
    replace(document.getElementById("outcome"), section(o.on_test ? "Final outcome on the test set (as report.md)"
      : "Final outcome (as report.md): the test set is not scored yet, the verdict is on the selection set",
      el("p", { class: "axis" }, inline(o.fitness || "")),
      el("div", { class: "verdict", id: "run-verdict" }, blocksView(o.verdict)), blocksView(o.selection),
      el("h3", {}, "Seed and best: selection score beside test score"), blocksView(o.spread, "spread"),
      blocksView(o.family)));
    const calls = d.editor_calls || { total: 0, llm: 0, offline_rules: 0 };
    replace(document.getElementById("search"), section(`The search (scores on the ${set})`, facts([
      ["task · preset", `${r.task} · ${r.preset}`], ["method", r.method || "—"], ["editor", r.editor || "—"],
      ["attempts", `${r.attempts} of at most ${r.max_attempts}`],
      ["budget used (seed incl.)", `${r.budget_used} of ${r.budget}`], ["evaluated candidates", r.evaluated],
      [`seed: ${metricLabel(m)}, selection set`, score(d.seed_ood, m)],
      [`best evaluated candidate: ${metricLabel(m)}, selection set`, d.best_candidate_ood === null ? "—"
        : `${score(d.best_candidate_ood, m)} (attempt index ${d.best_candidate_attempt})`],
      ["valid rate (feasible / attempts)", pct(d.valid_rate)], ["entanglement rate", pct(d.entanglement_rate)],
      ["LLM calls", String(calls.llm)], ["editor calls (offline rules, not an LLM)", String(calls.offline_rules)],
      ["wall time (first to last record)", hours(d.wall_hours)], ["device time (train + compile)", hours(d.device_hours)],
    ], "summary-facts")));
    const c = d.curves;
    const step = uPlot.paths.stepped({ align: 1 });
    const ylab = metricLabel(m);
    const scaled = (xs) => xs.map((v) => (v === null || v === undefined ? v : m.scale * v));
    const budgetX = r.budget ? r.budget - 1 : null;
    chart("c-best", `best-so-far ${m.name} vs attempt (selection set)`, [{ label: "best so far", paths: step },
      { label: "candidate", width: 0, points: { show: true, size: 6 } }],
      [c.attempt_x, scaled(c.best), scaled(c.cand_ood)], { xlabel: "attempt index (-1: the seed)", ylabel: ylab });
    chart("c-best-eval", `best-so-far ${m.name} vs evaluated candidates`, [{ label: "best so far", paths: step }],
      [c.eval_x, scaled(c.best_eval)], { xlabel: "evaluated candidates (0: the seed)", ylabel: ylab,
        marker: budgetX === null ? null : { x: budgetX, label: `budget ${r.budget} (seed incl.)` } });
    chart("c-rates", "cumulative rates", [{ label: "valid rate" }, { label: "entanglement rate", dash: [6, 3] }],
      [c.rate_x, c.valid, c.entangled], { xlabel: "attempt index", ylabel: "rate", yrange: [-0.02, 1.02] });
    const fnames = Object.keys(c.factor_counts);
    chart("c-factors", "factor choices (cumulative)", fnames.map((f) => ({ label: f })),
      [c.rate_x].concat(fnames.map((f) => c.factor_counts[f])), { xlabel: "attempt index", ylabel: "count" });
    replace(document.getElementById("failures"), section("Failures by stage and type",
      d.failures.length ? wrap(table(["stage", "type", "count"], d.failures.map((f) => [f.stage, f.type, f.count])))
        : el("p", {}, "No failures yet.")));
    replace(document.getElementById("archive"), section("Archive (score × MACs per island)", archive(d.archive, r.path, m)));
    replace(document.getElementById("lineage"), section("Incumbent lineage",
      d.lineage.length ? el("ol", { class: "lineage" }, d.lineage.map((p) => el("li", {},
        p.attempt === null || p.attempt === undefined ? "seed " : propLink(r.path, p.attempt), " ",
        el("code", {}, p.id), ` ${m.name} ${score(p.ood, m)}`))) : el("p", {}, "No incumbent yet.")));
    replace(document.getElementById("attempts"), section("Attempts" + (d.attempts_shown_from ? ` (from #${d.attempts_shown_from})` : ""),
      wrap(table(["attempt", "island", "factor", "status", "failure", "entangled", `${metricLabel(m)}, selection set`],
        d.attempts.slice().reverse().map((a) =>
          [propLink(r.path, a.attempt), a.island, a.factor, a.status,
            a.failure_stage ? `${a.failure_stage}: ${a.failure_type}` : "", a.entangled ? "yes" : "", score(a.ood_score, m)])))));
  }

  function archive(a, path, m) {
    if (!a) return el("p", {}, "No archive snapshot yet.");
    const oi = Math.max(0, a.dimensions.indexOf("ood_acc"));
    const mi = a.dimensions.indexOf("macs") < 0 ? 1 : a.dimensions.indexOf("macs");
    const bins = a.bins || 10;
    return el("div", { class: "islands" }, a.islands.map((isl) => {
      const at = {};
      for (const c of isl.cells) at[c.cell[oi] + "," + c.cell[mi]] = c;
      const rows = [];
      for (let o = bins - 1; o >= 0; o--) {
        const cells = [el("th", {}, String(o))];
        for (let m = 0; m < bins; m++) {
          const c = at[o + "," + m];
          cells.push(el("td", { class: c ? (c.id === a.best_id ? "occ best" : "occ") : "",
            title: c ? `${c.id} ${m.name} ${score(c.ood, m)} MACs ${kmacs(c.macs)} (${c.members} in cell)` : null },
            c ? (c.attempt === null || c.attempt === undefined ? "seed" : propLink(path, c.attempt)) : ""));
        }
        rows.push(el("tr", {}, cells));
      }
      return el("div", { class: "island" }, el("h3", {}, `island ${isl.island} · ${isl.members} members`),
        wrap(el("table", { class: "archive" }, el("tbody", {}, rows))),
        el("div", { class: "axis" }, "rows: score bin (high at top) · columns: MACs bin (low at left)"));
    }), el("p", {}, a.after_attempt < 0 ? "snapshot after the seed's evaluation"
      : `snapshot after attempt ${a.after_attempt}`));
  }

  function diffView(text) {
    if (!text) return pre("(no diff stored)");
    return el("pre", { class: "code diff" }, text.split("\n").map((line) => el("span", {
      class: line.startsWith("+") && !line.startsWith("+++") ? "add" : line.startsWith("-") && !line.startsWith("---") ? "del" : "",
    }, line + "\n")));
  }

  function feasibility(f) {
    if (!f) return el("p", {}, "No report (no program to check).");
    const rest = Object.assign({}, f);
    delete rest.diff;  // shown above
    const t = f.timings || {};
    return [facts([["feasible", f.feasible ? "yes" : "no"], ["stages passed", (f.stages_passed || []).join(" → ")],
      ["failure", f.failure_stage ? `${f.failure_stage}: ${f.failure_type}` : ""], ["reason", f.reason || ""],
      ["entanglement", f.entanglement], ["params", f.params], ["MACs (one processor step)", kmacs(f.macs)],
      ["check time", num(f.total_s, 2) + " s"]]),
      Object.keys(t).length ? wrap(table(["stage", "time (s)"], Object.entries(t).map(([k, v]) => [k, num(v, 3)]))) : null,
      el("details", {}, el("summary", {}, "full report"), pre(JSON.stringify(rest, null, 2)))];
  }

  function renderProposal(d) {
    const p = d.proposal;
    const nav = el("p", { class: "nav" }, runLink(d.run, "← run"),
      p.attempt > 0 ? [" · ", propLink(d.run, p.attempt - 1, "previous")] : null,
      p.attempt < d.last_attempt ? [" · ", propLink(d.run, p.attempt + 1, "next")] : null);
    const ev = d.evaluation;
    replace(app, nav, el("h1", {}, `Attempt ${p.attempt}`),
      facts([["factor", p.factor], ["factor source", p.factor_source], ["mode", p.mode], ["island", p.island],
        ["parent", d.parent_attempt === null || d.parent_attempt === undefined ? [p.parent_id, " (seed)"]
          : [propLink(d.run, d.parent_attempt), " ", p.parent_id]], ["status", p.status],
        ["failure", p.failure_stage ? `${p.failure_stage}: ${p.failure_type}` : ""], ["entanglement", p.entanglement],
        ["editor", p.editor]]),
      section("Directive", el("div", { id: "directive", class: "text" }, p.directive || "(none)")),
      p.reason ? section("Reason", pre(p.reason)) : null,
      section("Region diff against the parent", el("div", { id: "diff" }, diffView(d.diff))),
      section("Editor calls (LLM calls and offline rules)", d.calls.length ? d.calls.map((c, i) => el("div", { class: "call" },
        el("h3", {}, `${i + 1}. ${c.role || "call"} · ${c.is_llm ? "LLM" : "offline rules (not an LLM)"} · ` +
          `${c.backend || ""} ${c.model || ""} · ${c.ok ? "ok" : "failed"}` +
          ` · parse ${c.parse_outcome || "—"} · ${c.prompt_tokens || 0}+${c.completion_tokens || 0} tokens · ${num(c.latency_s, 1)} s`),
        c.error ? pre(c.error) : null,
        el("details", {}, el("summary", {}, "prompt"), pre(c.prompt)),
        el("details", {}, el("summary", {}, "reasoning"), pre(c.reasoning)),
        el("div", { class: "answer" }, el("h4", {}, "answer"), pre(c.response, "code response"))))
        : el("p", {}, "No editor calls recorded.")),
      section("Feasibility report", feasibility(d.feasibility)),
      section("Evaluation", ev ? [facts([["status", ev.status],
        [`${metricLabel(d.metric || METRIC_CLRS)}, the search's selection set`, score(ev.ood_score, d.metric)],
        ["validation score", score(ev.val_score, d.metric)], ["params", ev.params], ["MACs (one processor step)", kmacs(ev.macs)],
        ["train time", num(ev.train_seconds, 1) + " s"], ["compile time", num(ev.compile_seconds, 1) + " s"],
        ["error", ev.error ? `${ev.error_type}: ${ev.error}` : ""]]),
        el("details", {}, el("summary", {}, "evaluation record"), pre(JSON.stringify(ev.evaluation, null, 2)))]
        : el("p", {}, p.status === "feasible" ? "Not evaluated yet." : "Not evaluated (not feasible).")),
      section("Child program", el("details", {}, el("summary", {}, "source"), pre(d.child_source))));
  }

  function renderBenchmark(d) {
    const cell = (c) => c === null ? "…" : c.n === 0 ? "failed" :
      (c.n > 1 ? `${num(c.mean, 2)} ± ${num(c.std, 2)}` : num(c.mean, 2)) + (c.failed ? ` (${c.failed} failed)` : "");
    const progs = d.table;
    const same = new Set((d.identical || []).map(([label, task]) => label + "|" + task));
    const compared = progs.filter((p) => d.baseline && p.label !== d.baseline);
    const head = ["task"].concat(progs.map((p) => p.label), compared.map((p) => `${p.label} vs ${d.baseline}`));
    const rows = d.tasks.map((t, ti) => [t].concat(
      progs.map((p) => same.has(p.label + "|" + t) ? `${cell(p.cells[ti])} (identical: the baseline's runs)` : cell(p.cells[ti])),
      compared.map((p) => ((d.decisions || {})[p.label] || {})[t] || "—")));
    const pad = compared.map(() => "");
    rows.push([el("strong", {}, "mean over tasks")].concat(progs.map((p) => el("strong", {}, num(p.mean, 2))), pad));
    rows.push(["params"].concat(progs.map((p) => p.params === null ? "—" : p.params.toLocaleString("en-US")), pad));
    rows.push([`MACs per processor step (K, ${progs[0] && progs[0].macs_nodes ? progs[0].macs_nodes + " nodes" : "?"})`]
      .concat(progs.map((p) => kmacs(p.macs)), pad));
    replace(app, el("h1", {}, "Benchmark ", d.path || "(root)"),
      el("p", {}, `${d.preset} protocol; seeds ${(d.seeds || []).join(", ")}; results landed ${d.landed} ` +
        (d.sequential ? `(sequential: seeds added in rounds until each task is decided, at most ${d.expected}); `
          : `of ${d.expected}; `) +
        `device time ${num(d.device_hours, 2)} h; wall time ${num(d.wall_hours, 2)} h while jobs ran; ` +
        `measured on ${d.machines}. Scores: OOD accuracy (%) on the official OOD test set, trained on the seeds above.`),
      section("OOD accuracy (%) by task", taskBars(d)),
      paperFigure(d.paper_figure, "c-bench-paper"),
      section("Per task: mean ± sample std over seeds (OOD accuracy, %)", wrap(table(head, rows, "grid bench-table")),
        el("p", { class: "axis" }, "One row per task; '…' not landed yet; failed seeds are counted apart, never as zeros.")),
      d.baseline ? section(`Paired comparison against ${d.baseline} (as report.md)`,
        el("div", { class: "verdicts", id: "bench-verdicts" }, blocksView(d.verdicts, "verdict-table")))
        : section("Paired comparison", el("p", {}, "No baseline chosen (--baseline LABEL): no paired comparison.")),
      section("Failures", d.failures.length ? wrap(table(["program", "task", "seed", "error"],
        d.failures.map((f) => [f.program, f.task, f.seed, f.error_type]))) : el("p", {}, "None.")),
      reference(d.reference));
  }

  function spread(s, d) {
    return !s || s.mean === null ? "—" : s.std === null ? num(s.mean, d) : `${num(s.mean, d)} ± ${num(s.std, d)}`;
  }
  function bandChart(id, title, c, opts) {
    // Per method: the mean line, and its min and max as a filled band; one legend entry per
    // method (the band's edges are left out of the legend), each method its own dash.
    const series = [], data = [c.x], bands = [], hide = [];
    c.methods.forEach((m, i) => {
      const color = COLORS[i % COLORS.length], dash = DASHES[i % DASHES.length];
      series.push({ label: `${m.name} (n=${m.n})`, stroke: color, dash },
        { label: `${m.name} max`, stroke: color + "55", width: 1 },
        { label: `${m.name} min`, stroke: color + "55", width: 1 });
      data.push(m.mean, m.high, m.low);
      bands.push({ series: [3 * i + 2, 3 * i + 3], fill: color + "22" });
      hide.push(`${m.name} max`, `${m.name} min`);
    });
    chart(id, title, series, data, Object.assign({ bands, hide }, opts));
  }

  function renderCompare(d) {
    if (!document.getElementById("c-cmp-best")) {
      replace(app, el("div", { id: "cmp-summary" }), el("div", { id: "cmp-test" }), el("div", { id: "cmp-paper" }),
        el("div", { id: "cmp-table" }),
        el("div", { id: "cmp-charts" }, section("Bands over search seeds (mean line, min–max band)",
          el("div", { class: "charts" }, chartBox("c-cmp-best"), chartBox("c-cmp-valid")))),
        el("div", { id: "cmp-members" }), el("div", { id: "cmp-methods" }));
    }
    const reportOnly = d.status === "report only";
    document.getElementById("cmp-charts").style.display = reportOnly ? "none" : "";
    replace(document.getElementById("cmp-summary"), el("h1", {}, "Comparison ", d.path || "(root)"),
      el("p", { id: "cmp-protocol" }, `${d.preset} protocol, task ${d.task}, budget ${d.budget} evaluated candidates ` +
        `(seed included), attempt cap ${d.max_attempts}, search seeds ${d.seeds.join(", ")}; editor: ` +
        (d.offline ? "offline rule-based editor (NOT an LLM: these rows compare the scoping and the harness " +
          "under rules, not what an LLM would do)" : d.editors.join(", ") || "not recorded")),
      el("p", {}, `Runs with a database: ${d.runs_with_db} of ${d.expected}; status `,
        el("span", { class: "status " + d.status.replace(/ /g, "-") }, d.status)),
      reportOnly ? el("p", { class: "note", id: "cmp-report-only" }, "This folder keeps the comparison's plan " +
        "(compare.json) and its report.md, not the run databases of its searches: there is nothing here to " +
        "compute from. Its numbers and verdicts are in report.md in this folder.") : null);
    const rows = d.rows;
    const first = rows.length ? rows[0].name : "?";
    const testRows = rows.map((r) => [[el("code", {}, r.name), ` (${r.paper_name})`,
      r.offline_label ? el("div", { class: "offline" }, r.offline_label) : null], r.runs, spread(r.test_best_pct, 2),
      spread(r.best_ood_pct, 2)]);
    testRows.push([[el("code", {}, "seed"), " (seed program, no search)"], d.seed_row.selection.n,
      spread(d.seed_row.test, 2), spread(d.seed_row.selection, 2)]);
    const v = d.verdicts || {};
    replace(document.getElementById("cmp-test"), reportOnly ? null : section("On the test set: each method's best candidate",
      wrap(table(["method (paper name)", "runs", "best candidate: test OOD %", `best at budget B=${d.budget}: selection OOD %`],
        testRows, "grid test-table")),
      el("p", { class: "axis" }, "Test OOD %: each run's best evaluated candidate trained again and scored once on the test " +
        "set after the search (mean ± sample std over search seeds). The verdicts below test these scores, as report.md."),
      el("h3", {}, inline(`Methods against \`${first}\` (as report.md)`)),
      el("div", { class: "verdicts", id: "cmp-verdicts-first" }, blocksView(v.first, "verdict-table")),
      el("h3", {}, "Methods against the sampling controls (as report.md)"),
      el("div", { class: "verdicts", id: "cmp-verdicts-controls" }, blocksView(v.controls, "verdict-table"))));
    replace(document.getElementById("cmp-paper"), reportOnly ? null : paperFigure(d.paper_figure, "c-cmp-paper"));
    const th = d.threshold === null ? "to threshold" : `evaluated to reach ${num(100 * d.threshold, 2)} %` +
      (d.threshold_default ? " (lowest method mean)" : "");
    const offline = d.offline;
    replace(document.getElementById("cmp-table"), reportOnly ? null : section("Selection scores and search costs",
      wrap(table(["method (paper name)", "runs", `best at budget B=${d.budget}: selection OOD %`, "evaluated", th, "ratio vs first"],
        rows.map((r) => [[el("code", {}, r.name), ` (${r.paper_name})`], r.runs, spread(r.best_ood_pct, 2), spread(r.evaluated, 1),
          r.runs ? `${r.to_threshold === null ? "—" : r.to_threshold} (${r.reached}/${r.runs} reached)` : "—",
          r.ratio === null ? "—" : `${num(r.ratio, 2)}x`]), "grid methods")),
      wrap(table(["method", "valid rate", "entanglement rate", offline ? "LLM calls / evaluated (offline rules are not counted)"
        : "LLM calls / evaluated", "tokens / evaluated", "wall time", "device time"],
      rows.map((r) => [el("code", {}, r.name), spread(r.valid_rate, 2), spread(r.entanglement_rate, 2),
        num(r.llm_calls_per_evaluated, 2), num(r.tokens_per_evaluated, 2), hours(r.wall_hours), hours(r.device_hours)]), "grid costs")),
      el("p", { class: "axis" }, "Selection OOD %: the score the search selected with (the validation set under ood_val), " +
        "not the test set. Cells: mean ± sample std over search seeds. Entanglement rate: share of attempts " +
        "whose edit mixed both factors or touched the scaffolding. Device time: the runs' evaluations.")));
    const budgetX = d.budget ? d.budget - 1 : null;
    bandChart("c-cmp-best", "best-so-far OOD (%) vs evaluated candidates (selection set)", d.charts.best,
      { xlabel: "evaluated candidates (0: seed)", ylabel: "best OOD (%)",
        marker: budgetX === null ? null : { x: budgetX, label: `budget ${d.budget} (seed incl.)` } });
    bandChart("c-cmp-valid", "cumulative valid rate vs attempt", d.charts.valid,
      { xlabel: "attempt", ylabel: "valid rate", yrange: [-0.02, 1.02] });
    replace(document.getElementById("cmp-members"), section("Member searches", wrap(table(
      ["method", "seed", "run", "status", "editor", "attempts", "evaluated", "best-so-far OOD (selection set)"],
      d.members.map((m) => [m.method, m.seed, m.attempts !== undefined || m.status === "unreadable" ? runLink(m.path) : m.path,
        el("span", { class: "status " + m.status.replace(/[^a-z-]/g, "-") }, m.status + (m.error ? ": " + m.error : "")),
        m.editor || "", m.attempts === undefined ? "" : m.attempts, m.evaluated === undefined ? "" : m.evaluated,
        ood(m.best_ood)]), "grid members"))));
    replace(document.getElementById("cmp-methods"), section("Methods", el("ul", {},
      d.rows.map((r) => el("li", {}, el("code", {}, r.name), ` (${r.paper_name}): ${r.description}`)))),
    reference(d.reference));
  }

  const endpoints = {
    index: () => "/api/runs",
    run: () => "/api/run?" + q({ path: params.get("path") || "" }),
    proposal: () => "/api/proposal?" + q({ path: params.get("path") || "", attempt: params.get("attempt") || "" }),
    benchmark: () => "/api/benchmark?" + q({ path: params.get("path") || "" }),
    compare: () => "/api/compare?" + q({ path: params.get("path") || "", threshold: params.get("threshold") || "" }),
  };
  const renderers = {
    index: renderIndex, run: renderRun, proposal: renderProposal, benchmark: renderBenchmark, compare: renderCompare,
  };

  async function poll() {
    try {
      const resp = await fetch(endpoints[kind](), { cache: "no-store" });
      const text = await resp.text();
      if (!resp.ok) {
        let msg = text;
        try { msg = JSON.parse(text).error; } catch (e) { /* not JSON */ }
        replace(app, el("p", { class: "error" }, `${resp.status}: ${msg}`));
        live.textContent = "error";
        if (resp.status === 403 || resp.status === 404) return;
        setTimeout(poll, POLL_MS);
        return;
      }
      if (text !== lastText) {
        lastText = text;
        renderers[kind](JSON.parse(text));
      }
      live.textContent = "live · " + new Date().toLocaleTimeString();
    } catch (e) {
      live.textContent = "server unreachable";
    }
    setTimeout(poll, POLL_MS);
  }
  poll();
})();
