// mle-env view: the page of `mle-env view` and of its --bundle. Plain JavaScript, no dependencies.
// Data arrives through <script src="data/KEY.js"> files calling mleView.receive(KEY, DATA) (from a server
// or from file://). Every text of the data is put in the page as text (textContent, text nodes): never as
// HTML, never as a URL; the only URLs built are "#/..." routes and "data/KEY.js", from keys that match KEY.
"use strict";
(function () {
  const KEY = /^[a-z0-9-]{1,40}$/;
  const PAGE = 200;
  const CLIP = 40;
  const store = new Map();
  const waiting = new Map();
  let manifest = null;

  window.mleView = Object.freeze({
    receive(key, data) {
      if (typeof key !== "string" || !KEY.test(key)) return;
      store.set(key, data);
      for (const [resolve] of waiting.get(key) || []) resolve(data);
      waiting.delete(key);
    },
  });

  function load(key) {
    if (!KEY.test(key)) return Promise.reject(new Error("not a data key"));
    if (store.has(key)) return Promise.resolve(store.get(key));
    return new Promise((resolve, reject) => {
      const first = !waiting.has(key);
      if (first) waiting.set(key, []);
      waiting.get(key).push([resolve, reject]);
      if (!first) return;
      const s = document.createElement("script");
      s.src = "data/" + key + ".js";
      s.onload = () => {
        s.remove();
        if (!store.has(key)) fail(key);
      };
      s.onerror = () => { s.remove(); fail(key); };
      document.head.appendChild(s);
    });
  }

  function fail(key) {
    for (const [, reject] of waiting.get(key) || []) reject(new Error("no data for " + key));
    waiting.delete(key);
  }

  // --- building elements: text only --------------------------------------------------------------------
  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    if (props) {
      for (const [name, value] of Object.entries(props)) {
        if (value === null || value === undefined || value === false) continue;
        if (name === "class") node.className = value;
        else if (name === "text") node.textContent = String(value);
        else if (name === "route") node.setAttribute("href", route(value));
        else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
        else if (["title", "colspan", "type", "placeholder", "value", "id", "disabled"].includes(name)) node.setAttribute(name, String(value));
        else if (name.startsWith("data-")) node.setAttribute(name, String(value));
      }
    }
    add(node, children);
    return node;
  }

  function add(node, children) {
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  const SVG = "http://www.w3.org/2000/svg";
  function svg(tag, attrs, ...children) {
    const node = document.createElementNS(SVG, tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (name === "text") node.textContent = String(value);
      else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
      else node.setAttribute(name, String(value));
    }
    for (const child of children.flat()) if (child) node.appendChild(child);
    return node;
  }

  // routes are "#/" + fixed words + keys; a key from the data is used only when it matches KEY
  function route(parts) {
    const list = Array.isArray(parts) ? parts : [parts];
    for (const p of list) if (!/^[a-z0-9-]{0,40}$/.test(String(p))) return "#/";
    return "#/" + list.join("/");
  }

  // --- formatting ---------------------------------------------------------------------------------------
  function num(v, digits) {
    if (typeof v !== "number" || !isFinite(v)) return "";
    if (v !== 0 && (Math.abs(v) >= 1e6 || Math.abs(v) < 1e-4)) return v.toExponential(3);
    return Number(v.toPrecision(digits || 5)).toString();
  }
  function pct(v) { return typeof v === "number" ? (100 * v).toFixed(1) + "%" : "n/a"; }
  function secs(v) {
    if (typeof v !== "number") return "";
    if (v < 10) return v.toFixed(2) + " s";
    if (v < 600) return v.toFixed(0) + " s";
    return v < 7200 ? (v / 60).toFixed(1) + " min" : (v / 3600).toFixed(1) + " h";
  }
  function money(v) { return typeof v === "number" ? "$" + v.toFixed(4) : ""; }

  // --- a tiny highlighter: it only wraps tokens in spans, as text ---------------------------------------
  const PY_KW = "and as assert async await break class continue def del elif else except False finally for from global if import in is lambda None nonlocal not or pass raise return True try while with yield";
  const SH_KW = "if then else elif fi for in do done while case esac function return export local echo cd mkdir python python3 pip";
  const TOKENS = /(#[^\n]*)|("""[\s\S]*?(?:"""|$)|'''[\s\S]*?(?:'''|$)|"(?:[^"\\\n]|\\.)*"?|'(?:[^'\\\n]|\\.)*'?)|\b(\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)\b|\b([A-Za-z_][A-Za-z0-9_]*)\b/g;
  function highlight(text, lang) {
    const pre = el("pre", { class: "code" });
    if (text.length > 100000) { pre.textContent = text; return pre; }
    const kw = new Set((lang === "shell" ? SH_KW : PY_KW).split(" "));
    let last = 0;
    TOKENS.lastIndex = 0;
    let m;
    while ((m = TOKENS.exec(text)) !== null) {
      let cls = m[1] ? "tok-com" : m[2] ? "tok-str" : m[3] ? "tok-num" : kw.has(m[4]) ? "tok-kw" : null;
      if (!cls) continue;
      if (m.index > last) pre.appendChild(document.createTextNode(text.slice(last, m.index)));
      pre.appendChild(el("span", { class: cls, text: m[0] }));
      last = m.index + m[0].length;
    }
    if (last < text.length) pre.appendChild(document.createTextNode(text.slice(last)));
    return pre;
  }

  function diffBlock(lines) {
    const pre = el("pre", { class: "diff" });
    for (const line of lines) {
      const cls = line.startsWith("@@") ? "d-hunk" : line.startsWith("+") && !line.startsWith("+++") ? "d-add"
        : line.startsWith("-") && !line.startsWith("---") ? "d-del" : null;
      if (cls) pre.appendChild(el("span", { class: cls, text: line }));
      else pre.appendChild(document.createTextNode(line + "\n"));
    }
    return pre;
  }

  // an output cut to CLIP lines, with a button that shows it whole
  function clipped(text, cls) {
    const lines = text.replace(/\n$/, "").split("\n");
    const pre = el("pre", { class: cls });
    if (lines.length <= CLIP) { pre.textContent = lines.join("\n"); return pre; }
    const head = Math.ceil(CLIP / 2), tail = CLIP - head;
    pre.textContent = lines.slice(0, head).join("\n") + "\n[... " + (lines.length - CLIP) + " lines ...]\n" + lines.slice(-tail).join("\n");
    const button = el("button", { class: "expand", text: "show all " + lines.length + " lines" });
    button.addEventListener("click", () => {
      const whole = pre.dataset.whole === "1";
      pre.textContent = whole ? lines.slice(0, head).join("\n") + "\n[... " + (lines.length - CLIP) + " lines ...]\n" + lines.slice(-tail).join("\n") : lines.join("\n");
      pre.dataset.whole = whole ? "0" : "1";
      button.textContent = whole ? "show all " + lines.length + " lines" : "show " + CLIP + " lines";
    });
    return el("div", null, pre, button);
  }

  function kvTable(rows) {
    return el("table", { class: "kv" }, rows.filter((r) => r[1] !== "" && r[1] !== null && r[1] !== undefined)
      .map(([k, v]) => el("tr", null, el("td", { text: k }), el("td", null, v instanceof Node ? v : String(v)))));
  }

  // --- line plots ---------------------------------------------------------------------------------------
  function linePlot(series, opts) {
    const W = opts.width || 460, H = opts.height || 260, L = 52, R = 12, T = 12, B = 40;
    const pts = series.flatMap((s) => s.points).filter((p) => typeof p[0] === "number" && typeof p[1] === "number");
    const root = svg("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, class: "plot" });
    if (!pts.length) { root.appendChild(svg("text", { x: 20, y: H / 2, text: "nothing to plot yet" })); return root; }
    let [x0, x1] = [Math.min(...pts.map((p) => p[0])), Math.max(...pts.map((p) => p[0]))];
    let [y0, y1] = opts.y || [Math.min(...pts.map((p) => p[1])), Math.max(...pts.map((p) => p[1]))];
    if (x0 === x1) { x0 -= 1; x1 += 1; }
    if (y0 === y1) { const d = Math.abs(y0) * 0.1 || 1; y0 -= d; y1 += d; }
    const sx = (x) => L + (x - x0) / (x1 - x0) * (W - L - R), sy = (y) => H - B - (y - y0) / (y1 - y0) * (H - T - B);
    for (let i = 0; i <= 4; i++) {
      const y = y0 + (y1 - y0) * i / 4;
      root.appendChild(svg("line", { x1: L, x2: W - R, y1: sy(y), y2: sy(y), class: "grid" }));
      root.appendChild(svg("text", { x: L - 6, y: sy(y) + 4, "text-anchor": "end", text: num(y, 3) }));
    }
    const xt = opts.xticks || [x0, (x0 + x1) / 2, x1];
    for (const x of xt) root.appendChild(svg("text", { x: sx(x), y: H - B + 15, "text-anchor": "middle", text: num(x, 3) }));
    root.appendChild(svg("line", { x1: L, x2: W - R, y1: H - B, y2: H - B, class: "axis" }));
    root.appendChild(svg("line", { x1: L, x2: L, y1: T, y2: H - B, class: "axis" }));
    root.appendChild(svg("text", { x: (L + W - R) / 2, y: H - 6, "text-anchor": "middle", text: opts.xlabel || "" }));
    root.appendChild(svg("text", { x: 12, y: (T + H - B) / 2, "text-anchor": "middle", transform: `rotate(-90 12 ${(T + H - B) / 2})`, text: opts.ylabel || "" }));
    series.forEach((s, n) => {
      const p = s.points.filter((q) => typeof q[0] === "number" && typeof q[1] === "number");
      if (!p.length) return;
      const shift = opts.shift ? (n - (series.length - 1) / 2) * opts.shift : 0;
      const d = (opts.step ? p.map((q, i) => (i ? `H${sx(q[0])}V${sy(q[1])}` : `M${sx(q[0])},${sy(q[1])}`)) : p.map((q, i) => (i ? "L" : "M") + (sx(q[0]) + shift) + "," + sy(q[1]))).join(" ");
      root.appendChild(svg("path", { d, class: "series s" + (n % 4) }));
      for (const q of p) root.appendChild(svg("circle", { cx: sx(q[0]) + shift, cy: sy(q[1]), r: 3, class: "f" + (n % 4) }, svg("title", { text: `${s.label}: ${num(q[1], 4)} at ${num(q[0], 4)}` })));
    });
    return root;
  }

  function legend(series) {
    return el("div", { class: "legend" }, series.map((s, n) => el("span", null, el("b", { class: "f" + (n % 4), text: "\u25CF " }), s.label)));
  }

  // --- the evaluation page ------------------------------------------------------------------------------
  const tableState = new Map();

  function decode(col, i) { return col.values[col.codes[i]]; }

  function renderRun(main, r) {
    const run = manifest.runs[r];
    const cols = run.columns;
    const s = run.summary;
    main.appendChild(el("h1", { text: (run.kind === "run" ? "Evaluation: " : "Episodes: ") + run.path }));
    if (s) {
      main.appendChild(el("p", { class: "headline", text: s.headline }));
      const e = s.episodes;
      main.appendChild(el("div", { class: "chips" }, [["ok", e.ok], ["sandbox_broken", e.sandbox_broken], ["agent_error", e.agent_error],
        ["infra_error", e.infra_error], ["not run", e.not_run]].map(([k, v]) => el("span", { class: "chip status-" + k.replace(" ", "_") }, el("b", { text: v }), k))));
      const medals = el("div", null, el("h2", { text: "Medals per seed and split: mean \u00B1 SEM over seeds" }));
      const passk = el("div", null);
      main.appendChild(el("div", { class: "layout summary" }, medals, passk));
      medals.appendChild(el("table", { class: "leaderboard" },
        el("tr", null, el("th", { text: "split" }), s.tiers.map((t) => el("th", { class: "num", text: t[1] })), el("th", { class: "num", text: "competitions" })),
        s.leaderboard.map((row) => el("tr", null, el("td", { text: row.split }),
          row.cells.map(([mean, sem]) => el("td", { class: "num", text: mean === null ? "n/a" : mean.toFixed(1) + "%" + (sem === null ? "" : " \u00B1 " + sem.toFixed(1)) })),
          el("td", { class: "num", text: row.competitions })))));
      passk.appendChild(el("h2", { text: "pass@k per tier (mean over competitions)" }));
      const series = s.tiers.map(([t, label]) => ({ label, points: (s.pass_at_k[t] || []).filter((p) => p[1] !== null).map((p) => [p[0], 100 * p[1]]) }));
      const ks = [...new Set(series.flatMap((x) => x.points.map((p) => p[0])))].sort((a, b) => a - b);
      passk.appendChild(el("div", { class: "passk" }, linePlot(series, { y: [0, 100], xticks: ks, xlabel: "k (episodes per competition)", ylabel: "pass@k (%)", shift: 3 }), legend(series)));
    }
    if (!cols) { main.appendChild(el("p", { class: "note", text: "no episodes" })); return; }
    main.appendChild(el("h2", { text: "Episodes" }));
    const state = tableState.get(r) || { sort: null, desc: false, filters: {}, text: "", page: 0 };
    tableState.set(r, state);
    const host = el("div", { id: "episodes" });
    const filterNames = ["competition", "split", "medal", "status", "agent"];
    const filters = el("div", { class: "filters" });
    for (const name of filterNames) {
      const col = cols[name];
      if (!col || col.values.length < 1) continue;
      const select = el("select", { "data-filter": name }, el("option", { value: "", text: "all" }),
        col.values.map((v, code) => el("option", { value: String(code), text: v === "" ? "(none)" : v })));
      select.value = state.filters[name] === undefined ? "" : String(state.filters[name]);
      select.addEventListener("change", () => { state.filters[name] = select.value === "" ? undefined : Number(select.value); state.page = 0; draw(); });
      filters.appendChild(el("label", null, name + " ", select));
    }
    const search = el("input", { type: "search", placeholder: "search actions and outputs", value: state.text, id: "search" });
    let timer = null;
    search.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(() => { state.text = search.value; state.page = 0; draw(); }, 200); });
    filters.appendChild(search);
    const info = el("span", { class: "note" });
    filters.appendChild(info);
    main.appendChild(filters);
    main.appendChild(host);

    const columns = [["competition", "competition"], ["split", "split"], ["seed", "seed", true], ["agent", "agent"], ["status", "status"],
      ["medal", "medal"], ["score", "score", true], ["percentile", "percentile", true], ["wall", "wall time", true], ["cost", "cost", true], ["steps", "steps", true]];
    const MEDAL_ORDER = { gold: 3, silver: 2, bronze: 1, none: 0, "": -1 };
    function value(name, i) {
      const col = cols[name];
      if (!col) return null;
      if (Array.isArray(col)) return col[i];
      const v = decode(col, i);
      return name === "medal" ? MEDAL_ORDER[v] : v;
    }

    let digest = null;
    function draw() {
      let idx = [];
      for (let i = 0; i < cols.n; i++) {
        let keep = true;
        for (const name of filterNames) {
          const f = state.filters[name];
          if (f !== undefined && cols[name].codes[i] !== f) { keep = false; break; }
        }
        if (keep) idx.push(i);
      }
      const q = state.text.trim().toLowerCase();
      if (q) {
        if (!digest) {
          info.textContent = "loading the search text...";
          load(run.search_key).then((d) => { digest = d; draw(); }, () => { info.textContent = "no search text"; });
          return;
        }
        idx = idx.filter((i) => (digest.texts[i] || "").includes(q) || decode(cols.competition, i).toLowerCase().includes(q));
      }
      if (state.sort) {
        const dir = state.desc ? -1 : 1;
        idx.sort((a, b) => {
          const va = value(state.sort, a), vb = value(state.sort, b);
          if (va === vb) return a - b;
          if (va === null || va === undefined) return 1;
          if (vb === null || vb === undefined) return -1;
          return (va < vb ? -1 : 1) * dir;
        });
      }
      const pages = Math.max(1, Math.ceil(idx.length / PAGE));
      state.page = Math.min(state.page, pages - 1);
      const shown = idx.slice(state.page * PAGE, state.page * PAGE + PAGE);
      info.textContent = idx.length + " of " + cols.n + " episodes";
      const head = el("tr", null, columns.map(([name, label, numeric]) => {
        const th = el("th", { class: "sortable" + (numeric ? " num" : "") + (state.sort === name ? (state.desc ? " sorted-desc" : " sorted-asc") : ""), text: label, "data-col": name });
        th.addEventListener("click", () => { if (state.sort === name) state.desc = !state.desc; else { state.sort = name; state.desc = false; } draw(); });
        return th;
      }));
      const rows = shown.map((i) => {
        const status = decode(cols.status, i), medal = decode(cols.medal, i);
        const key = "e" + r + "-" + i;
        const tr = el("tr", { class: "row", "data-row": i },
          el("td", null, cols.trajectory[i] ? el("a", { route: ["episode", key], text: decode(cols.competition, i) }) : decode(cols.competition, i)),
          el("td", { text: decode(cols.split, i) }), el("td", { class: "num", text: cols.seed[i] ?? "" }),
          el("td", { text: decode(cols.agent, i) }), el("td", { class: "status-" + status, text: status }),
          el("td", { class: "medal-" + medal, text: medal }), el("td", { class: "num", text: num(cols.score[i]) }),
          el("td", { class: "num", text: typeof cols.percentile[i] === "number" ? (100 * cols.percentile[i]).toFixed(1) : "" }),
          el("td", { class: "num", text: secs(cols.wall[i]) }), el("td", { class: "num", text: money(cols.cost[i]) }),
          el("td", { class: "num", text: cols.steps[i] ?? "" }));
        if (cols.error && cols.error[i]) tr.setAttribute("title", cols.error[i]);
        if (cols.trajectory[i]) tr.addEventListener("click", (ev) => { if (ev.target.tagName !== "A") location.hash = route(["episode", key]); });
        else tr.className = "row none";
        return tr;
      });
      const pager = el("div", { class: "pager" },
        el("button", { class: "prev", text: "\u2190 prev", disabled: state.page === 0, onclick: () => { state.page--; draw(); } }),
        el("span", { text: "page " + (state.page + 1) + " of " + pages }),
        el("button", { class: "next", text: "next \u2192", disabled: state.page >= pages - 1, onclick: () => { state.page++; draw(); } }));
      host.replaceChildren(el("table", { class: "episodes" }, head, rows), pager);
    }
    draw();
    if (s && s.disclosure) {
      main.appendChild(el("h2", { text: "Disclosure (what the results rest on)" }));
      main.appendChild(kvTable(s.disclosure));
    }
  }

  function renderCompare(main) {
    const c = manifest.compare;
    main.appendChild(el("h1", { text: "Compare two runs" }));
    main.appendChild(el("p", null, "A: ", el("code", { text: c.names[0] }), el("br"), "B: ", el("code", { text: c.names[1] })));
    main.appendChild(el("table", { class: "compare" },
      el("tr", null, ["competition", "split", "n A", "n B", "medal A", "medal B", "\u0394 medal", "mean score A", "mean score B", "\u0394 score"].map((h) => el("th", { text: h }))),
      c.rows.map((row) => el("tr", null, el("td", { text: row.competition }), el("td", { text: row.split || "" }),
        el("td", { class: "num", text: row.n[0] ?? "" }), el("td", { class: "num", text: row.n[1] ?? "" }),
        el("td", { class: "num", text: pct(row.medal_rate[0]) }), el("td", { class: "num", text: pct(row.medal_rate[1]) }),
        el("td", { class: "num " + (row.medal_delta > 0 ? "better" : row.medal_delta < 0 ? "worse" : ""), text: row.medal_delta === null ? "" : (row.medal_delta > 0 ? "+" : "") + (100 * row.medal_delta).toFixed(1) + " pts" }),
        el("td", { class: "num", text: num(row.mean_score[0]) }), el("td", { class: "num", text: num(row.mean_score[1]) }),
        el("td", { class: "num " + (row.better === true ? "better" : row.better === false ? "worse" : ""), text: row.score_delta === null ? "" : (row.score_delta > 0 ? "+" : "") + num(row.score_delta) }))),
    ));
    main.appendChild(el("p", { class: "note", text: "Medal: share of scheduled episodes with any medal. Score deltas are B \u2212 A; green is better for the competition's metric." }));
  }

  // --- the episode page ---------------------------------------------------------------------------------
  function renderStep(st) {
    const ok = st.exit_code === 0 && !st.timed_out;
    const head = el("div", { class: "step-head" },
      el("span", { class: "n", text: "#" + st.step }), el("span", { class: "dim", text: "+" + secs(st.started_at) }),
      el("span", { class: "kind", text: st.summary }), el("span", { text: secs(st.duration_s) }),
      el("span", { class: ok ? "exit-ok" : "exit-bad", text: "exit " + st.exit_code }),
      st.timed_out ? el("span", { class: "exit-bad", text: "TIMED OUT" }) : null,
      el("span", { class: "dim", text: "left: " + secs(st.time_left) + (typeof st.steps_left === "number" && st.steps_left >= 0 ? ", " + st.steps_left + " steps" : "") }));
    const box = el("section", { class: "step " + (ok ? "passed" : "failed"), "data-step": st.step }, head);
    if (st.code && st.code.trim()) box.appendChild(highlight(st.code.replace(/\n$/, ""), st.type === "shell" ? "shell" : "python"));
    if (st.stdout.trim()) box.appendChild(el("div", { class: "label", text: "stdout" })), box.appendChild(clipped(st.stdout, "stdout"));
    if (st.stderr.trim()) box.appendChild(el("div", { class: "label", text: "stderr" })), box.appendChild(clipped(st.stderr, "stderr"));
    if (st.message.trim()) box.appendChild(el("pre", { class: "message", text: st.message.trim() }));
    if (st.llm.length) {
      box.appendChild(el("div", { class: "label", text: "LLM calls" }));
      box.appendChild(el("table", { class: "llm" }, el("tr", null, ["model", "prompt tokens", "completion tokens", "cost"].map((h) => el("th", { text: h }))),
        st.llm.map((c) => el("tr", null, el("td", { text: c.model || "" }), el("td", { class: "num", text: c.prompt_tokens ?? "" }),
          el("td", { class: "num", text: c.completion_tokens ?? "" }), el("td", { class: "num", text: money(c.cost) })))));
    }
    if (st.repairs) {
      box.appendChild(el("div", { class: "label", text: "harness repairs: " + (st.repairs.fired.join(", ") || "none") }));
      if (st.repairs.diff.trim()) box.appendChild(diffBlock(st.repairs.diff.replace(/\n$/, "").split("\n")));
    }
    if (st.policy) box.appendChild(el("div", { class: "label" }, "policy: ", el("code", { text: st.policy })));
    return box;
  }

  function renderEpisode(main, key) {
    main.appendChild(el("p", { class: "note", text: "loading..." }));
    load(key).then((d) => {
      main.replaceChildren();
      const h = d.header;
      const r = Number(d.key.slice(1).split("-")[0]);
      const back = manifest.runs[r] && manifest.runs[r].columns ? el("a", { route: r ? ["run", String(r)] : "", text: "\u2190 all episodes" }) : null;
      main.appendChild(el("p", null, back, d.tree_key ? [" \u00B7 ", el("a", { route: ["tree", d.tree_key], class: "tree-link", text: "AIDE tree of this episode" })] : null));
      main.appendChild(el("h1", { text: (h.competition_id || "?") + (h.competition_version !== undefined ? " (v" + h.competition_version + ")" : "") + (h.seed !== undefined ? " seed " + h.seed : "") }));
      main.appendChild(el("p", { class: "dim", text: [h.sandbox && "sandbox " + h.sandbox, h.time_limit && "time limit " + secs(h.time_limit),
        "step limit " + (h.step_limit ?? "none"), h.started_at && "started " + h.started_at, h.episode_id && "episode " + h.episode_id].filter(Boolean).join("   ") }));
      if (d.fork) {
        main.appendChild(el("p", { class: "fork" }, "forked from episode " + (d.fork.parent_episode || "?") + " after step " + d.fork.step + " ",
          d.fork.parent_key ? el("a", { route: ["episode", d.fork.parent_key], class: "parent-link", text: "(open the parent)" }) : el("span", { class: "dim", text: "(the parent is not among the paths viewed)" })));
      }
      const end = d.end;
      main.appendChild(el("p", { class: "headline", text: end ? end.status + ": " + end.steps + " steps in " + secs(end.elapsed_s) + (typeof end.reward === "number" ? ", reward " + num(end.reward) : "") : "no end yet: " + d.steps.length + " steps (still running, or its process died)" }));
      if (d.task) main.appendChild(el("details", { class: "task" }, el("summary", { text: "task text" }), el("pre", { text: d.task })));
      main.appendChild(el("h2", { text: "Timeline (" + d.steps.length + " steps)" }));
      const timeline = el("div", { class: "timeline" });
      main.appendChild(timeline);
      let shown = 0;
      const more = el("button", { class: "more-steps" });
      function next() {
        d.steps.slice(shown, shown + 200).forEach((st) => timeline.appendChild(renderStep(st)));
        shown = Math.min(d.steps.length, shown + 200);
        more.textContent = "show " + Math.min(200, d.steps.length - shown) + " more steps";
        if (shown >= d.steps.length) more.remove();
      }
      more.addEventListener("click", next);
      main.appendChild(more);
      next();
      main.appendChild(el("h2", { text: "Grade" }));
      main.appendChild(d.grade ? kvTable(d.grade) : el("p", { class: "note", text: "not graded (an infrastructure error, or the episode was abandoned or is still running)" }));
      for (const e of d.not_kept) main.appendChild(el("p", { class: "error", text: "not kept: " + e }));
      if (d.test_scores.length) {
        main.appendChild(el("h2", { text: "Hidden test scores (never shown to the agent)" }));
        main.appendChild(el("table", null, el("tr", null, ["step", "source", "file", "valid", "score", "medal"].map((x) => el("th", { text: x }))),
          d.test_scores.map((t) => el("tr", null, el("td", { text: t.step ?? "" }), el("td", { text: t.source ?? "" }), el("td", { text: t.file ?? "" }),
            el("td", { text: String(t.valid) }), el("td", { class: "num", text: num(t.score) }), el("td", { text: t.medal ?? "" })))));
      }
      if (d.kept.length) {
        main.appendChild(el("h2", { text: "Kept in the episode's folder" }));
        main.appendChild(el("pre", { text: d.kept.join("\n") }));
      }
      if (d.code.length) {
        main.appendChild(el("h2", { text: "Code files (" + d.code.length + ")" }));
        for (const f of d.code) {
          main.appendChild(el("details", { class: "code-file" }, el("summary", { text: f.path + "  (" + f.bytes + " bytes" + (f.cut ? ", cut" : "") + ")" }),
            highlight(f.text, /\.sh$/.test(f.path) ? "shell" : "python")));
        }
      }
      if (d.submission) {
        main.appendChild(el("h2", { text: "Submission (first " + d.submission.rows.length + " rows of " + d.submission.bytes + " bytes)" }));
        main.appendChild(el("table", { class: "submission" }, el("tr", null, d.submission.header.map((x) => el("th", { text: x }))),
          d.submission.rows.map((row) => el("tr", null, row.map((x) => el("td", { text: x }))))));
      }
    }, () => main.replaceChildren(el("p", { class: "error", text: "no such episode (or its trajectory is not under the paths viewed)" })));
  }

  // --- the AIDE tree page -------------------------------------------------------------------------------
  function renderTree(main, key, selected) {
    main.appendChild(el("p", { class: "note", text: "loading..." }));
    load(key).then((d) => {
      main.replaceChildren();
      if (d.episode_key) main.appendChild(el("p", null, el("a", { route: ["episode", d.episode_key], text: "\u2190 the episode" })));
      main.appendChild(el("h1", { text: "AIDE tree: " + (d.competition_id || "?") + " (" + d.nodes.length + " nodes)" }));
      main.appendChild(el("p", { class: "dim", text: "metric " + (d.metric.name || "?") + ", " + (d.lower_is_better ? "lower" : "higher") + " is better; best node " + (d.best ?? "none") }));
      main.appendChild(el("div", { class: "legend" }, ["buggy", "valid", "best"].map((s) => el("span", null, el("i", { class: s }), s))));
      const maxX = Math.max(0, ...d.nodes.map((n) => n.x)), maxY = Math.max(0, ...d.nodes.map((n) => n.y));
      const DX = 56, DY = 64, P = 24;
      const W = (maxX + 1) * DX + 2 * P, H = (maxY + 1) * DY + 2 * P;
      const byId = new Map(d.nodes.map((n) => [n.id, n]));
      const pos = (n) => [P + DX / 2 + n.x * DX, P + 14 + n.y * DY];
      const chart = svg("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, class: "tree" });
      for (const n of d.nodes) {
        const p = byId.get(n.parent);
        if (p) { const [x1, y1] = pos(p), [x2, y2] = pos(n); chart.appendChild(svg("path", { d: `M${x1},${y1} C${x1},${(y1 + y2) / 2} ${x2},${(y1 + y2) / 2} ${x2},${y2}`, class: "edge" })); }
      }
      const detail = el("div", { class: "detail" });
      const groups = new Map();
      function select(n) {
        for (const [id, g] of groups) g.classList.toggle("selected", id === n.id);
        showNode(detail, n, byId, select, d);
      }
      for (const n of d.nodes) {
        const [x, y] = pos(n);
        const g = svg("g", { class: "node " + n.status, "data-node": String(Number(n.id)), onclick: () => select(n) },
          svg("circle", { cx: x, cy: y, r: 13 }), svg("text", { x, y: y + 4, text: String(n.id) }),
          svg("title", { text: `node ${n.id} (${n.operator}) ${n.status}` + (n.score !== null ? ` CV ${num(n.score)}` : "") }));
        groups.set(n.id, g);
        chart.appendChild(g);
      }
      main.appendChild(el("div", { class: "layout" }, el("div", { class: "tree-box" }, chart), detail));
      main.appendChild(el("h2", { text: "Best validation score" }));
      const best = { label: "best CV", points: d.curve.filter((c) => c.best !== null).map((c) => [c.seconds, c.best]) };
      const byCount = { label: "best CV", points: d.curve.filter((c) => c.best !== null).map((c) => [c.nodes, c.best]) };
      main.appendChild(el("div", { class: "layout" }, linePlot([best], { xlabel: "seconds since the first node", ylabel: "best CV score", step: true }),
        linePlot([byCount], { xlabel: "nodes", ylabel: "best CV score", step: true, xticks: d.curve.map((c) => c.nodes).filter((k, i, a) => a.length < 12 || i % Math.ceil(a.length / 10) === 0) })));
      const first = byId.get(selected) || byId.get(d.best) || d.nodes[0];
      if (first) select(first);
      else detail.appendChild(el("p", { class: "note", text: "no nodes yet" }));
    }, () => main.replaceChildren(el("p", { class: "error", text: "no such tree" })));
  }

  function showNode(box, n, byId, select, d) {
    box.replaceChildren();
    box.appendChild(el("h2", { text: "Node " + n.id + " (" + n.operator + ", " + n.status + ")" }));
    const parent = byId.get(n.parent);
    const parentLink = parent ? el("button", { class: "parent-node", text: "node " + parent.id, onclick: () => select(parent) }) : "none";
    const ts = n.test_score;
    box.appendChild(kvTable([["parent", parentLink], ["status", n.status + (n.promoted ? " (promoted)" : "")], ["failure class", n.failure],
      ["why buggy", n.buggy ? n.bug_reason : ""], ["CV score", num(n.score)], ["fold scores", n.fold_scores.map((x) => num(x)).join(", ")],
      ["dev score", n.dev_score === null || n.dev_score === undefined ? "" : typeof n.dev_score === "object" ? JSON.stringify(n.dev_score) : num(n.dev_score)],
      ["hidden test score", ts ? num(ts.score) + (ts.medal ? " (" + ts.medal + ")" : "") + (ts.valid === false ? " invalid" : "") : ""],
      ["validation", n.validation], ["exit code", n.exit_code === null ? "" : String(n.exit_code) + (n.timed_out ? " (timed out)" : "")],
      ["run time", secs(n.run_time_s)], ["LLM", n.llm.calls ? n.llm.calls + " calls, " + n.llm.prompt_tokens + " tokens in, " + n.llm.completion_tokens + " out" : ""]]));
    if (n.plan) { box.appendChild(el("h3", { text: "Plan" })); box.appendChild(el("pre", { class: "plan", text: n.plan })); }
    box.appendChild(el("h3", { text: parent ? "Diff against node " + parent.id : "Diff (a draft: no parent)" }));
    if (n.diff) box.appendChild(n.diff.length ? diffBlock(n.diff) : el("p", { class: "note", text: "the same code as its parent" }));
    if (n.repairs) {
      box.appendChild(el("h3", { text: "Harness repairs: " + (n.repairs.fired.join(", ") || "none") }));
      if (n.repairs.diff.trim()) box.appendChild(diffBlock(n.repairs.diff.replace(/\n$/, "").split("\n")));
    }
    box.appendChild(el("h3", { text: "Code" }));
    box.appendChild(highlight(n.code, "python"));
    box.appendChild(el("h3", { text: "Output" }));
    box.appendChild(n.output.trim() ? clipped(n.output, "output") : el("p", { class: "note", text: "no output" }));
  }

  // --- routing ------------------------------------------------------------------------------------------
  function show() {
    const main = document.getElementById("main");
    main.replaceChildren();
    const hash = location.hash && location.hash !== "#" ? location.hash : manifest.start;
    const parts = hash.replace(/^#\/?/, "").split("/");
    const nav = document.getElementById("nav");
    const two = manifest.runs.length > 1;
    add(nav.replaceChildren() || nav, [manifest.runs[0].columns ? el("a", { route: "", text: two ? "run A" : "episodes" }) : null,
      two && manifest.runs[1].columns ? el("a", { route: ["run", "1"], text: "run B" }) : null,
      manifest.compare ? el("a", { route: "compare", text: "compare" }) : null]);
    if (parts[0] === "episode" && KEY.test(parts[1] || "")) renderEpisode(main, parts[1]);
    else if (parts[0] === "tree" && KEY.test(parts[1] || "")) renderTree(main, parts[1], parts[2] !== undefined ? Number(parts[2]) : undefined);
    else if (parts[0] === "compare" && manifest.compare) renderCompare(main);
    else if (parts[0] === "run" && /^[0-9]$/.test(parts[1] || "") && manifest.runs[Number(parts[1])]) renderRun(main, Number(parts[1]));
    else if (manifest.runs[0].columns || manifest.runs[0].summary) renderRun(main, 0);
    else location.hash = manifest.start;
    window.scrollTo(0, 0);
  }

  function start() {
    load("index").then((m) => {
      manifest = m;
      window.addEventListener("hashchange", show);
      show();
    }, () => document.getElementById("main").replaceChildren(el("p", { class: "error", text: "could not load data/index.js" })));
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
