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

  // ------------------------------------------------------------------ charts
  function chart(id, title, series, data, opts) {
    let box = document.getElementById(id);
    const points = data.length > 1 ? data[1].filter((v) => v !== null).length : 0;
    const key = series.map((s) => s.label).join("|");
    if (charts[id] && charts[id].key === key) {
      charts[id].u.setData(data);
    } else {
      if (charts[id]) charts[id].u.destroy();
      replace(box);
      const colors = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"];
      const u = new uPlot({
        title, width: Math.min(560, window.innerWidth - 40), height: 240,
        scales: {
          x: { time: false },
          y: opts && opts.yrange ? { range: opts.yrange } : {},
        },
        axes: [{ label: (opts && opts.xlabel) || "", incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000] },
          { label: (opts && opts.ylabel) || "" }],
        series: [{ label: (opts && opts.xlabel) || "x" }].concat(series.map((s, i) => Object.assign(
          { stroke: colors[i % colors.length], width: 2, spanGaps: false }, s))),
        bands: (opts && opts.bands) || [],
      }, data, box);
      charts[id] = { u, key };
    }
    const xs = data[0];
    charts[id].u.setScale("x", { min: xs.length ? Math.min(0, xs[0]) : 0, max: Math.max(4, xs.length ? xs[xs.length - 1] : 0) });
    box.dataset.points = String(points);
  }
  function chartBox(id) { return el("div", { id, class: "chart", "data-points": "0" }); }

  // ------------------------------------------------------------------ pages
  function renderIndex(d) {
    const runs = d.runs.map((r) => [runLink(r.path), r.task, r.preset, r.method, r.editor,
      r.budget === undefined ? "—" : `${r.budget_used}/${r.budget} evaluated (seed incl.), ${r.attempts}/${r.max_attempts} attempts`,
      ood(r.best_ood), el("span", { class: "status " + r.status }, r.status + (r.error ? ": " + r.error : ""))]);
    const benches = d.benchmarks.map((b) => [el("a", { href: "/benchmark?" + q({ path: b.path }) }, b.path || "(root)"),
      (b.programs || []).join(", "), b.tasks, b.landed, b.error || ""]);
    const comps = (d.comparisons || []).map((c) => [compareLink(c.path), c.task, c.preset,
      (c.methods || []).join(", "), (c.seeds || []).join(", "), c.budget,
      c.error ? "" : `${c.runs_with_db}/${c.expected}`, c.error || ""]);
    replace(app,
      section("Runs", runs.length ? table(["run", "task", "preset", "method", "editor", "budget used", "best-so-far OOD (seed incl.)", "status"], runs, "grid runs")
        : el("p", {}, "No run directories (holding run.db) under the served root yet.")),
      section("Benchmarks", benches.length ? table(["benchmark", "programs", "tasks", "results landed", "note"], benches)
        : el("p", {}, "No benchmark directories (holding benchmark.db).")),
      section("Comparisons", comps.length ? table(["comparison", "task", "preset", "methods", "seeds",
        "budget", "runs with a database", "note"], comps, "grid comparisons")
        : el("p", {}, "No comparison directories (holding compare.json, written by spark-jax compare).")));
  }

  function renderRun(d) {
    const r = d.run;
    if (!document.getElementById("c-best")) {
      replace(app, el("div", { id: "summary" }),
        section("Best so far", el("div", { class: "charts" }, chartBox("c-best"), chartBox("c-best-eval"))),
        section("Rates and factors", el("div", { class: "charts" }, chartBox("c-rates"), chartBox("c-factors"))),
        el("div", { id: "failures" }), el("div", { id: "archive" }), el("div", { id: "lineage" }),
        el("div", { id: "attempts" }));
    }
    replace(document.getElementById("summary"), el("h1", {}, "Run ", r.path || "(root)"),
      table(["task", "preset", "method", "editor", "attempts", "budget used (seed incl.)", "evaluated candidates",
        "seed OOD", "best evaluated candidate OOD (attempt index)", "valid rate", "entanglement rate", "status"],
        [[r.task, r.preset, r.method, r.editor, `${r.attempts}/${r.max_attempts}`,
          `${r.budget_used}/${r.budget}`, r.evaluated, ood(d.seed_ood),
          d.best_candidate_ood === null ? "—" : `${ood(d.best_candidate_ood)} (${d.best_candidate_attempt})`, pct(d.valid_rate),
          pct(d.entanglement_rate), el("span", { class: "status " + r.status }, r.status)]]));
    const c = d.curves;
    const step = uPlot.paths.stepped({ align: 1 });
    chart("c-best", "best OOD so far vs attempt", [{ label: "best so far", paths: step },
      { label: "candidate OOD", width: 0, points: { show: true, size: 6 } }],
      [c.attempt_x, pcts(c.best), pcts(c.cand_ood)], { xlabel: "attempt index (-1: the seed)", ylabel: "OOD (%)", yrange: [0, 100] });
    chart("c-best-eval", "best OOD so far vs evaluated candidates", [{ label: "best so far", paths: step }],
      [c.eval_x, pcts(c.best_eval)], { xlabel: "evaluated candidates (0: the seed)", ylabel: "OOD (%)", yrange: [0, 100] });
    chart("c-rates", "cumulative rates", [{ label: "valid rate" }, { label: "entanglement rate" }],
      [c.rate_x, c.valid, c.entangled], { xlabel: "attempt index", ylabel: "rate", yrange: [0, 1] });
    const fnames = Object.keys(c.factor_counts);
    chart("c-factors", "factor choices (cumulative)", fnames.map((f) => ({ label: f })),
      [c.rate_x].concat(fnames.map((f) => c.factor_counts[f])), { xlabel: "attempt", ylabel: "count" });
    replace(document.getElementById("failures"), section("Failures by stage and type",
      d.failures.length ? table(["stage", "type", "count"], d.failures.map((f) => [f.stage, f.type, f.count]))
        : el("p", {}, "No failures yet.")));
    replace(document.getElementById("archive"), section("Archive (OOD × MACs per island)", archive(d.archive, r.path)));
    replace(document.getElementById("lineage"), section("Incumbent lineage",
      d.lineage.length ? el("ol", { class: "lineage" }, d.lineage.map((p) => el("li", {},
        p.attempt === null || p.attempt === undefined ? "seed " : propLink(r.path, p.attempt), " ",
        el("code", {}, p.id), " OOD ", ood(p.ood)))) : el("p", {}, "No incumbent yet.")));
    replace(document.getElementById("attempts"), section("Attempts" + (d.attempts_shown_from ? ` (from #${d.attempts_shown_from})` : ""),
      table(["attempt", "island", "factor", "status", "failure", "entangled", "OOD"], d.attempts.slice().reverse().map((a) =>
        [propLink(r.path, a.attempt), a.island, a.factor, a.status,
          a.failure_stage ? `${a.failure_stage}: ${a.failure_type}` : "", a.entangled ? "yes" : "", num(a.ood_score)]))));
  }

  function archive(a, path) {
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
            title: c ? `${c.id} OOD ${ood(c.ood)} MACs ${kmacs(c.macs)} (${c.members} in cell)` : null },
            c ? (c.attempt === null || c.attempt === undefined ? "seed" : propLink(path, c.attempt)) : ""));
        }
        rows.push(el("tr", {}, cells));
      }
      return el("div", { class: "island" }, el("h3", {}, `island ${isl.island} · ${isl.members} members`),
        el("table", { class: "archive" }, el("tbody", {}, rows)),
        el("div", { class: "axis" }, "rows: OOD bin (high at top) · columns: MACs bin (low at left)"));
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
    return [table(["feasible", "stages passed", "failure", "reason", "entanglement", "params", "MACs", "check s"],
      [[f.feasible ? "yes" : "no", (f.stages_passed || []).join(" → "),
        f.failure_stage ? `${f.failure_stage}: ${f.failure_type}` : "", f.reason || "", f.entanglement,
        f.params, kmacs(f.macs), num(f.total_s, 2)]]),
      Object.keys(t).length ? table(Object.keys(t), [Object.values(t).map((v) => num(v, 3))]) : null,
      el("details", {}, el("summary", {}, "full report"), pre(JSON.stringify(rest, null, 2)))];
  }

  function renderProposal(d) {
    const p = d.proposal;
    const nav = el("p", { class: "nav" }, runLink(d.run, "← run"),
      p.attempt > 0 ? [" · ", propLink(d.run, p.attempt - 1, "previous")] : null,
      p.attempt < d.last_attempt ? [" · ", propLink(d.run, p.attempt + 1, "next")] : null);
    const ev = d.evaluation;
    replace(app, nav, el("h1", {}, `Attempt ${p.attempt}`),
      table(["factor", "factor source", "mode", "island", "parent", "status", "failure", "entanglement", "editor"],
        [[p.factor, p.factor_source, p.mode, p.island,
          d.parent_attempt === null || d.parent_attempt === undefined ? [p.parent_id, " (seed)"]
            : [propLink(d.run, d.parent_attempt), " ", p.parent_id], p.status,
          p.failure_stage ? `${p.failure_stage}: ${p.failure_type}` : "", p.entanglement, p.editor]]),
      section("Directive", el("div", { id: "directive", class: "text" }, p.directive || "(none)")),
      p.reason ? section("Reason", pre(p.reason)) : null,
      section("Region diff against the parent", el("div", { id: "diff" }, diffView(d.diff))),
      section("LLM calls", d.calls.length ? d.calls.map((c, i) => el("div", { class: "call" },
        el("h3", {}, `${i + 1}. ${c.role || "call"} · ${c.backend || ""} ${c.model || ""} · ${c.ok ? "ok" : "failed"}` +
          ` · parse ${c.parse_outcome || "—"} · ${c.prompt_tokens || 0}+${c.completion_tokens || 0} tokens · ${num(c.latency_s, 1)} s`),
        c.error ? pre(c.error) : null,
        el("details", {}, el("summary", {}, "prompt"), pre(c.prompt)),
        el("details", {}, el("summary", {}, "reasoning"), pre(c.reasoning)),
        el("div", { class: "answer" }, el("h4", {}, "answer"), pre(c.response, "code response"))))
        : el("p", {}, "No LLM calls (offline editor).")),
      section("Feasibility report", feasibility(d.feasibility)),
      section("Evaluation", ev ? [table(["status", "OOD", "val", "params", "MACs", "train s", "compile s", "error"],
        [[ev.status, ood(ev.ood_score), ood(ev.val_score), ev.params, kmacs(ev.macs), num(ev.train_seconds, 1),
          num(ev.compile_seconds, 1), ev.error ? `${ev.error_type}: ${ev.error}` : ""]]),
        el("details", {}, el("summary", {}, "evaluation record"), pre(JSON.stringify(ev.evaluation, null, 2)))]
        : el("p", {}, p.status === "feasible" ? "Not evaluated yet." : "Not evaluated (not feasible).")),
      section("Child program", el("details", {}, el("summary", {}, "source"), pre(d.child_source))));
  }

  function renderBenchmark(d) {
    const cell = (c) => c === null ? "…" : c.n === 0 ? "failed" :
      (c.n > 1 ? `${num(c.mean, 2)} ± ${num(c.std, 2)}` : num(c.mean, 2)) + (c.failed ? ` (${c.failed} failed)` : "");
    replace(app, el("h1", {}, "Benchmark ", d.path || "(root)"),
      el("p", {}, `preset ${d.preset}; seeds ${JSON.stringify(d.seeds)}; results landed ${d.landed} of ${d.expected}; ` +
        `device time ${num(d.device_hours, 2)} h; wall time ${num(d.wall_hours, 2)} h while jobs ran; ` +
        `measured on ${d.machines}`),
      section("OOD accuracy (%) by task", table(["program"].concat(d.tasks, ["mean"]),
        d.table.map((r) => [r.label].concat(r.cells.map(cell), [num(r.mean, 2)])))),
      d.baseline ? section(`Paired comparison against ${d.baseline}`, table(["program", "wins", "losses", "cannot tell", "mean diff (pp)", "95% CI"],
        d.comparison.map((c) => [c.program, c.wins, c.losses, c.cannot_tell, num(c.mean_diff, 2),
          c.ci[0] === null ? "—" : `[${num(c.ci[0], 2)}, ${num(c.ci[1], 2)}]`]))) : null,
      section("Failures", d.failures.length ? table(["program", "task", "seed", "error"],
        d.failures.map((f) => [f.program, f.task, f.seed, f.error_type])) : el("p", {}, "None.")));
  }

  const COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"];
  function spread(s, d) {
    return !s || s.mean === null ? "—" : s.std === null ? num(s.mean, d) : `${num(s.mean, d)} ± ${num(s.std, d)}`;
  }
  function bandChart(id, title, c, opts) {
    // Per method: the mean line, then its min and max drawn as a filled band.
    const series = [], data = [c.x], bands = [];
    c.methods.forEach((m, i) => {
      const color = COLORS[i % COLORS.length];
      series.push({ label: `${m.name} (n=${m.n})`, stroke: color },
        { label: `${m.name} max`, stroke: color + "55", width: 1 },
        { label: `${m.name} min`, stroke: color + "55", width: 1 });
      data.push(m.mean, m.high, m.low);
      bands.push({ series: [3 * i + 2, 3 * i + 3], fill: color + "22" });
    });
    chart(id, title, series, data, Object.assign({ bands }, opts));
  }

  function renderCompare(d) {
    if (!document.getElementById("c-cmp-best")) {
      replace(app, el("div", { id: "cmp-summary" }), el("div", { id: "cmp-table" }),
        section("Bands over search seeds (mean line, min–max band)", el("div", { class: "charts" },
          chartBox("c-cmp-best"), chartBox("c-cmp-valid"))),
        el("div", { id: "cmp-members" }), el("div", { id: "cmp-methods" }));
    }
    replace(document.getElementById("cmp-summary"), el("h1", {}, "Comparison ", d.path || "(root)"),
      el("p", { id: "cmp-protocol" }, `${d.preset} protocol, task ${d.task}, budget ${d.budget} evaluated candidates ` +
        `(seed included), attempt cap ${d.max_attempts}, search seeds ${d.seeds.join(", ")}; editor: ` +
        (d.offline ? "offline rule-based editor (NOT an LLM: these rows compare the scoping and the harness " +
          "under rules, not what an LLM would do)" : d.editors.join(", ") || "?")),
      el("p", {}, `Runs with a database: ${d.runs_with_db} of ${d.expected}; status `,
        el("span", { class: "status " + d.status }, d.status)));
    const th = d.threshold === null ? "to threshold" : `evaluated to reach ${num(100 * d.threshold, 2)}%` +
      (d.threshold_default ? " (lowest method mean)" : "");
    replace(document.getElementById("cmp-table"), section("Methods at the same budget",
      table(["method (paper name)", "runs", "best OOD % at budget", "evaluated", th, "ratio vs first", "valid rate",
        "entanglement rate", "LLM calls / evaluated", "tokens / evaluated", "wall h", "device h"],
      d.rows.map((r) => [[el("code", {}, r.name), ` (${r.paper_name})`,
        r.offline_label ? el("div", { class: "offline" }, r.offline_label) : null],
        r.runs, spread(r.best_ood_pct, 2), spread(r.evaluated, 1),
        r.runs ? `${r.to_threshold === null ? "—" : r.to_threshold} (${r.reached}/${r.runs} reached)` : "—",
        r.ratio === null ? "—" : `${num(r.ratio, 2)}x`, spread(r.valid_rate, 2), spread(r.entanglement_rate, 2),
        num(r.llm_calls_per_evaluated, 2), num(r.tokens_per_evaluated, 2), num(r.wall_hours, 3),
        num(r.device_hours, 3)]), "grid methods"),
      el("p", { class: "axis" }, "Cells: mean ± sample std over search seeds. Entanglement rate: share of attempts " +
        "whose edit mixed both factors or touched the scaffolding. Device hours: the runs' evaluations.")));
    bandChart("c-cmp-best", "best-so-far OOD (%) vs evaluated candidates", d.charts.best,
      { xlabel: "evaluated (0: seed)", ylabel: "best OOD %", yrange: [0, 100] });
    bandChart("c-cmp-valid", "cumulative valid rate vs attempt", d.charts.valid,
      { xlabel: "attempt", ylabel: "valid rate", yrange: [0, 1] });
    replace(document.getElementById("cmp-members"), section("Member searches", table(
      ["method", "seed", "run", "status", "editor", "attempts", "evaluated", "best OOD"],
      d.members.map((m) => [m.method, m.seed, m.status === "missing" ? m.path : runLink(m.path),
        el("span", { class: "status " + m.status }, m.status + (m.error ? ": " + m.error : "")),
        m.editor || "", m.attempts === undefined ? "" : m.attempts, m.evaluated === undefined ? "" : m.evaluated,
        ood(m.best_ood)]), "grid members")));
    replace(document.getElementById("cmp-methods"), section("Methods", el("ul", {},
      d.rows.map((r) => el("li", {}, el("code", {}, r.name), ` (${r.paper_name}): ${r.description}`)))));
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
