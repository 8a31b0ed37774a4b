/**
 * The console's page: its HTML, rendered on the server with Hono's JSX (the
 * dashboard shell and the login form), and the client script and stylesheet
 * the host serves as `/console/app.js` and `/console/app.css` (no CDN, no
 * build step). The script fills the dashboard from `/api/*` and follows
 * `/api/live`. Every value is shown with `textContent`, never as HTML, so a
 * tool's output cannot inject markup into the console. No inline script or
 * style: the page's CSP allows only the host's own files.
 *
 * @module
 */

import type { Child } from "hono/jsx";

/** The Content-Security-Policy of every console page. */
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

function Shell(props: { title: string; children: Child }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{props.title}</title>
        <link rel="stylesheet" href="/console/app.css" />
        <link rel="icon" href="data:," />
      </head>
      <body>{props.children}</body>
    </html>
  );
}

function Section(props: { id: string; title: string; children: Child }) {
  return (
    <section id={props.id} class="card">
      <h2>{props.title}</h2>
      {props.children}
    </section>
  );
}

// A table's head, and its body (by id) the client script fills.
function Table(props: { head: string[]; body: string }) {
  // Rendered once on the server: no keys to reconcile (Hono would write
  // them out as attributes).
  // deno-lint-ignore jsx-key
  const cells = props.head.map((name) => <th>{name}</th>);
  return (
    <table>
      <thead>
        <tr>{cells}</tr>
      </thead>
      <tbody id={props.body}></tbody>
    </table>
  );
}

// A column of a `.columns` grid: its heading, and its list (by id) the
// client script fills.
function Column(props: { title: string; list: string }) {
  return (
    <div>
      <h3>{props.title}</h3>
      <ul id={props.list}></ul>
    </div>
  );
}

// The history: filters, the runs, and the opened run (files and all).
function HistorySection() {
  return (
    <Section id="history" title="History">
      <form id="filters" class="filters">
        <input name="name" placeholder="name" aria-label="Filter by name" />
        <select name="kind" aria-label="Filter by kind">
          <option value="">any kind</option>
          <option value="tool">tool</option>
          <option value="skill">skill</option>
        </select>
        <select name="outcome" aria-label="Filter by outcome">
          <option value="">any outcome</option>
          <option value="ok">ok</option>
          <option value="error">error</option>
        </select>
        <input
          name="session"
          placeholder="session"
          aria-label="Filter by session"
        />
        <button type="submit">Filter</button>
      </form>
      <Table
        head={["ended", "kind", "name", "outcome", "ms", "transport", "host"]}
        body="history-rows"
      />
      <button id="more" type="button" hidden>Older…</button>
      <div id="detail" class="detail" hidden></div>
    </Section>
  );
}

// Per tool and skill numbers, with a latency chart each.
function StatsSection() {
  return (
    <Section id="stats" title="Per tool and skill (last hour)">
      <Table
        head={["name", "calls", "errors", "p50 ms", "p95 ms", "latency"]}
        body="stats-rows"
      />
    </Section>
  );
}

// Live sessions, sandbox processes and the fleet's hosts.
function SystemSection() {
  return (
    <Section id="system" title="Sessions and sandboxes">
      <div class="columns">
        <Column title="Sessions" list="sessions" />
        <Column title="Sandbox processes" list="processes" />
        <Column title="Hosts" list="hosts" />
      </div>
    </Section>
  );
}

/**
 * The dashboard page.
 *
 * @param options whether a login is in use (shows the sign-out button)
 * @returns the HTML document
 */
export function dashboardPage(options: { auth: boolean }): string {
  return "<!doctype html>" + (
    <Shell title="skillbox console">
      <header>
        <h1>skillbox</h1>
        <span id="conn" class="muted">connecting…</span>
        <span id="store" class="muted"></span>
        {options.auth
          ? (
            <form method="post" action="/logout" class="inline">
              <button type="submit">Sign out</button>
            </form>
          )
          : <span class="warn">console open: no tokens configured</span>}
      </header>
      <main>
        <Section id="running" title="Running now">
          <ul id="running-list" class="runs"></ul>
          <p id="running-empty" class="muted">Nothing is running.</p>
        </Section>
        <Section id="catalog" title="Loaded">
          <input
            id="search"
            type="search"
            placeholder="Search tools (BM25)…"
            aria-label="Search tools"
          />
          <div id="catalog-summary" class="muted"></div>
          <div class="columns">
            <div>
              <h3>Tools by toolkit</h3>
              <div id="tools"></div>
            </div>
            <Column title="Skills" list="skills" />
          </div>
          <div id="refused-section" hidden>
            <h3>Refused</h3>
            <ul id="refused"></ul>
          </div>
        </Section>
        <HistorySection />
        <StatsSection />
        <SystemSection />
      </main>
      <script type="module" src="/console/app.js"></script>
    </Shell>
  );
}

/**
 * The login form.
 *
 * @param options an error to show, if any
 * @returns the HTML document
 */
export function loginPage(options: { error?: string } = {}): string {
  return "<!doctype html>" + (
    <Shell title="skillbox console: sign in">
      <main class="login">
        <h1>skillbox</h1>
        <form method="post" action="/login" class="card">
          <label for="token">Token</label>
          <input
            id="token"
            name="token"
            type="password"
            autocomplete="off"
            required
          />
          {options.error ? <p class="error">{options.error}</p> : null}
          <button type="submit">Sign in</button>
        </form>
      </main>
    </Shell>
  );
}

/** The client script's source. */
export const CLIENT_SCRIPT: string = `
const $ = (id) => document.getElementById(id);
const el = (tag, attrs = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c instanceof Node ? c : String(c ?? ""));
  return node;
};
// Every request of the page: a session that ended (signed out in another
// tab, expired) sends the browser to the sign-in form.
const fetchOk = async (path) => {
  const res = await fetch(path, { credentials: "same-origin" });
  if (res.status === 401) { location.href = "/login"; throw new Error("signed out"); }
  if (!res.ok) throw new Error(path + ": " + res.status);
  return res;
};
const getJson = async (path) => (await fetchOk(path)).json();
const time = (ms) => new Date(ms).toLocaleTimeString();
const pretty = (v) => typeof v === "string" ? v : JSON.stringify(v, null, 2);

const running = new Map();
function renderRunning() {
  const list = $("running-list");
  list.replaceChildren();
  for (const run of running.values()) {
    const bar = el("progress", { max: "100", class: "bar" });
    if (typeof run.progress === "number") bar.value = run.progress;
    list.append(el("li", { class: "run", "data-run": run.id },
      el("div", {}, el("b", {}, run.name), " ", el("span", { class: "muted" }, run.kind + " · " + run.transport + (run.host ? " · host " + run.host : "") + " · since " + time(run.started_at))),
      bar,
      el("div", { class: "status" }, run.status || ""),
      el("pre", { class: "tokens" }, run.tokens || "")));
  }
  $("running-empty").hidden = running.size > 0;
}

// A tool, skill or refusal as the catalog lists it: its name, a badge,
// and what it is or why it is not served.
const entry = (attrs, name, badge, note, ...more) => el("li", attrs, el("b", {}, name), " ",
  badge ? el("span", { class: "badge" }, badge) : "", " ", el("span", { class: "muted" }, note), ...more);
const why = (x) => x.blocked_reason ? "blocked: " + x.blocked_reason : x.description;
let catalog = null;
function renderCatalog(matches) {
  const tools = $("tools");
  tools.replaceChildren();
  const shown = matches ? new Set(matches) : null;
  const byKit = new Map();
  for (const t of catalog.tools) {
    if (shown && !shown.has(t.name)) continue;
    const kit = t.toolkit || "(no toolkit)";
    if (!byKit.has(kit)) byKit.set(kit, []);
    byKit.get(kit).push(t);
  }
  if (matches) {
    const rank = new Map(matches.map((n, i) => [n, i]));
    for (const list of byKit.values()) list.sort((a, b) => rank.get(a.name) - rank.get(b.name));
  }
  for (const [kit, list] of [...byKit.entries()].sort()) {
    tools.append(el("h4", {}, kit), el("ul", { class: "tools" }, ...list.map((t) =>
      entry({ "data-tool": t.name, class: "status-" + t.status }, t.name, t.status === "blocked" ? "blocked" : "", why(t)))));
  }
  // What the registry read but does not serve, with why (impostors of a
  // taken name, tools declaring another folder's toolkit).
  const refused = catalog.refused;
  $("refused").replaceChildren(...refused.map((r) =>
    entry({ "data-refused": r.name, class: "status-blocked" }, r.kind + " " + r.name, "refused", r.reason)));
  $("refused-section").hidden = refused.length === 0;
  $("skills").replaceChildren(...catalog.skills.map((s) =>
    entry({ "data-skill": s.name, class: "status-" + s.status.toLowerCase() }, s.name, s.status, why(s),
      ...(s.warnings || []).map((w) => el("div", { class: "muted", "data-skill-warning": "" }, "warning: " + w)))));
  $("catalog-summary").textContent = catalog.tools.length + " tools, " + catalog.toolkits.length + " toolkits, " + catalog.skills.length + " skills" + (refused.length ? ", " + refused.length + " refused" : "") + (matches ? " · " + matches.length + " match(es)" : "");
}
async function loadCatalog() {
  catalog = await getJson("/api/catalog");
  renderCatalog(null);
}
let searchTimer = 0;
$("search").addEventListener("input", (e) => {
  clearTimeout(searchTimer);
  const q = e.target.value.trim();
  searchTimer = setTimeout(async () => {
    if (!q) return renderCatalog(null);
    const found = await getJson("/api/catalog?q=" + encodeURIComponent(q));
    renderCatalog(found.matches || []);
  }, 150);
});

let next = null;
// Rows the pages brought: the history keeps at least this many, and at
// least a page (the API's default limit) when live runs push in.
let loaded = 0;
const PAGE = 50;
function historyRow(run) {
  return el("tr", { "data-run": run.id, "data-cursor": run.cursor ?? "", class: run.outcome === "ok" ? "" : "failed", onclick: () => openRun(run.id) },
    el("td", {}, time(run.ended_at ?? run.started_at)), el("td", {}, run.parent_id ? "↳ " + run.kind : run.kind), el("td", {}, run.name),
    el("td", { class: "outcome" }, run.outcome), el("td", {}, run.duration_ms === null ? "…" : Math.round(run.duration_ms)), el("td", {}, run.transport),
    el("td", {}, run.host || ""));
}
function filters() {
  const data = new FormData($("filters"));
  const q = new URLSearchParams();
  for (const [k, v] of data) if (v) q.set(k, String(v));
  return q;
}
async function loadHistory(more) {
  const q = filters();
  const rows = $("history-rows");
  // A page may hold runs already shown (live ones, once the oldest rows
  // were pushed out): each run is listed once, and "more" reads on past
  // a page with nothing new.
  for (;;) {
    if (more && next !== null) q.set("before", String(next));
    const page = await getJson("/api/runs?" + q);
    $("store").textContent = page.stored ? "" : "history off (store: null or unavailable)";
    if (!more) {
      rows.replaceChildren();
      loaded = 0;
    }
    const shown = new Set([...rows.children].map((tr) => tr.dataset.run));
    const fresh = page.runs.filter((run) => !shown.has(run.id));
    rows.append(...fresh.map(historyRow));
    loaded += fresh.length;
    next = page.next;
    if (!more || fresh.length > 0 || next === null) break;
  }
  $("more").hidden = next === null;
}
// A finished run goes on top. A tab left open on a busy host would grow
// without end, so the oldest rows go past what the pages brought; "more"
// brings them back, from the last one dropped (or, when that was a live
// row with no cursor, from the newest run, skipping what is shown).
function prependFinished(run) {
  const rows = $("history-rows");
  rows.prepend(historyRow(run));
  while (rows.children.length > Math.max(loaded, PAGE)) {
    const cursor = rows.lastElementChild.dataset.cursor;
    rows.lastElementChild.remove();
    next = cursor ? Number(cursor) + 1 : Number.MAX_SAFE_INTEGER;
    $("more").hidden = false;
  }
}
$("filters").addEventListener("submit", (e) => { e.preventDefault(); loadHistory(false); });
$("more").addEventListener("click", () => loadHistory(true));

async function openRun(id) {
  const body = await getJson("/api/runs/" + encodeURIComponent(id));
  const run = body.run;
  const box = $("detail");
  box.hidden = false;
  const parts = [el("h3", {}, run.name + " · " + (run.outcome || "running")),
    el("p", { class: "muted" }, run.kind + " · " + run.id + " · session " + run.session + (run.token_label ? " · " + run.token_label : "") + (run.host ? " · host " + run.host : "")),
    el("h4", {}, "Arguments"), el("pre", {}, pretty(run.arguments))];
  if (run.error) parts.push(el("h4", {}, "Error"), el("pre", { class: "error" }, run.error));
  if (run.result !== undefined) parts.push(el("h4", {}, "Result"), el("pre", {}, pretty(run.result)));
  if (body.children && body.children.length) {
    // A page of children at a time (a run_code run may have 1,000): the
    // rest load on asking, each page after the last one shown.
    const list = el("ul", { class: "children" }, ...body.children.map(childItem));
    const count = el("span", { class: "muted" });
    const more = el("button", { type: "button", class: "more-children" }, "more tool calls");
    let next = body.children_next;
    const shown = () => {
      count.textContent = " (" + list.children.length + " of " + body.children_total + ")";
      more.hidden = next === null;
    };
    more.addEventListener("click", async () => {
      more.disabled = true;
      try {
        const page = await getJson("/api/runs/" + encodeURIComponent(run.id) + "/children?after=" + encodeURIComponent(next));
        list.append(...page.children.map(childItem));
        next = page.next;
        shown();
      } finally {
        more.disabled = false;
      }
    });
    shown();
    parts.push(el("h4", {}, "Tool calls", count), list, more);
  }
  if (body.files && body.files.length) {
    parts.push(el("h4", {}, "Files kept (" + body.files.length + ")"), el("ul", { class: "files" }, ...body.files.map((f) => fileItem(run.id, f))),
      el("pre", { class: "file-view", hidden: "" }));
  }
  if (body.events) {
    parts.push(el("h4", {}, "Events (" + run.event_count + ")"), el("ol", { class: "events" },
      ...body.events.map((e) => el("li", { "data-kind": e.kind }, el("b", {}, e.kind), " ", el("code", {}, JSON.stringify(e.data))))));
  }
  box.replaceChildren(...parts);
}

function childItem(c) {
  return el("li", { class: "link", "data-child": c.id, onclick: () => openRun(c.id) }, c.name + " · " + c.outcome + (c.duration_ms === null ? "" : " · " + Math.round(c.duration_ms) + " ms"));
}

// A kept file: its name (a script chose it: text only), size, and what was
// kept; a text file opens below the list, read with fetch and shown as text.
const FILE_VIEW_MAX = 256 * 1024;
function fileItem(runId, f) {
  const url = "/api/runs/" + encodeURIComponent(runId) + "/" + f.content;
  const what = !f.kept ? (f.note || "not kept") : f.binary ? "binary" : "text";
  const item = el("li", { "data-file": String(f.index) }, el("code", { class: "name" }, f.name), " ",
    el("span", { class: "muted" }, f.size + " B · " + what));
  if (f.kept && !f.binary) item.append(" ", el("button", { type: "button", class: "view", onclick: () => viewFile(item, url, f) }, "view"));
  if (f.kept) item.append(" ", el("a", { href: url, download: "" }, "download"));
  return item;
}
async function viewFile(item, url, f) {
  const text = await (await fetchOk(url)).text();
  const box = item.closest(".detail").querySelector(".file-view");
  box.hidden = false;
  box.dataset.file = String(f.index);
  box.textContent = text.length > FILE_VIEW_MAX ? text.slice(0, FILE_VIEW_MAX) + "\\n… (first " + FILE_VIEW_MAX + " characters of " + text.length + ")" : text;
}

function sparkline(values) {
  // One sample is drawn as a flat line: a single point would draw nothing.
  if (values.length === 1) values = [values[0], values[0]];
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", "0 0 100 20");
  svg.setAttribute("class", "spark");
  const max = Math.max(1, ...values);
  const line = document.createElementNS(ns, "polyline");
  line.setAttribute("points", values.map((v, i) => (values.length < 2 ? 0 : (i * 100) / (values.length - 1)).toFixed(1) + "," + (20 - (v / max) * 18).toFixed(1)).join(" "));
  svg.append(line);
  return svg;
}
async function loadStats() {
  const body = await getJson("/api/stats");
  $("stats-rows").replaceChildren(...body.stats.map((s) => el("tr", { "data-stat": s.name },
    el("td", {}, s.kind + " " + s.name), el("td", {}, s.calls), el("td", {}, s.errors + " (" + Math.round(s.error_rate * 100) + "%)"),
    el("td", {}, s.p50_ms), el("td", {}, s.p95_ms), el("td", {}, sparkline(s.recent_ms)))));
}
async function loadOverview() {
  const body = await getJson("/api/overview");
  $("sessions").replaceChildren(...body.sessions.map((s) => el("li", {}, s.transport + " · " + s.id.slice(0, 8) + (s.token_label ? " · " + s.token_label : "") + " · " + s.in_flight + " in flight")));
  // A token that is not a console admin sees its own sessions' work only.
  const own = body.scope === "own";
  if (body.sessions.length === 0) $("sessions").append(el("li", { class: "muted" }, own ? "no client sessions of this token" : "no client sessions"));
  $("processes").replaceChildren(...body.processes.map((p) => el("li", {}, "pid " + p.pid + " · " + (p.rss_bytes / 1048576).toFixed(1) + " MiB · " + p.busy + " busy · " + p.principal)));
  if (body.processes.length === 0) $("processes").append(el("li", { class: "muted" }, own ? "shown to console admin tokens only" : "no sandbox processes"));
  // The fleet's hosts (one without a shared store): alive or gone, by heartbeat.
  const seen = (h) => h.self ? "this host" : h.last_seen_ms === null ? "never seen" : "seen " + Math.round(h.last_seen_ms / 1000) + " s ago";
  $("hosts").replaceChildren(...(body.hosts || []).map((h) => el("li", { "data-host": h.id, class: h.alive ? "" : "warn" },
    h.id + " · " + (h.alive ? "alive" : "gone") + " · " + seen(h) + " · " + h.running + " running")));
  if (body.fleet_error) $("hosts").append(el("li", { class: "warn" }, body.fleet_error));
  return body;
}

let refreshTimer = 0;
function refreshSoon() {
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(() => { loadStats(); loadOverview(); }, 300);
}
function follow() {
  const source = new EventSource("/api/live");
  source.addEventListener("open", () => { $("conn").textContent = "live"; });
  source.addEventListener("error", () => { $("conn").textContent = "reconnecting…"; });
  source.addEventListener("hello", (e) => {
    running.clear();
    for (const run of JSON.parse(e.data).running) running.set(run.id, run);
    renderRunning();
  });
  source.addEventListener("started", (e) => {
    const run = JSON.parse(e.data);
    running.set(run.id, run);
    renderRunning();
    refreshSoon();
  });
  source.addEventListener("event", (e) => {
    const ev = JSON.parse(e.data);
    const run = running.get(ev.run_id);
    if (!run) return;
    if (ev.kind === "progress") {
      if (typeof ev.data.pct === "number") run.progress = ev.data.pct;
      if (ev.data.message) run.status = ev.data.message;
    } else if (ev.kind === "status") run.status = ev.data.message || run.status;
    else if (ev.kind === "llm.token") run.tokens = ((run.tokens || "") + (ev.data.text || "")).slice(-4000);
    else return;
    renderRunning();
  });
  source.addEventListener("finished", (e) => {
    const run = JSON.parse(e.data);
    running.delete(run.id);
    renderRunning();
    const q = filters();
    if (![...q.keys()].length) prependFinished(run);
    refreshSoon();
  });
}

await Promise.all([loadCatalog(), loadHistory(false), loadStats(), loadOverview()]);
follow();
setInterval(loadOverview, 5000);
document.body.dataset.ready = "true";
`;

/** The console's stylesheet, served as `/console/app.css`. */
export const CLIENT_STYLE: string = `
:root { color-scheme: light dark; --fg: #1d232a; --muted: #6b7480; --bg: #f6f7f9; --card: #fff; --line: #dde1e6; --accent: #2f6fdf; --bad: #c53030; }
@media (prefers-color-scheme: dark) { :root { --fg: #e3e6ea; --muted: #98a2ad; --bg: #14171b; --card: #1d2126; --line: #2e343b; --accent: #6ea1ff; --bad: #ff7b7b; } }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
header { display: flex; gap: 1rem; align-items: center; padding: .6rem 1.2rem; border-bottom: 1px solid var(--line); background: var(--card); }
header h1 { font-size: 1.1rem; margin: 0; }
main { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 480px), 1fr)); gap: 1rem; padding: 1rem 1.2rem; max-width: 1500px; margin: 0 auto; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: .8rem 1rem; min-width: 0; }
#system li, .detail p { overflow-wrap: anywhere; }
#running, #history, #catalog { grid-column: 1 / -1; }
h2 { font-size: 1rem; margin: 0 0 .6rem; } h3 { font-size: .9rem; margin: .4rem 0; } h4 { margin: .6rem 0 .2rem; font-size: .85rem; }
.muted { color: var(--muted); } .warn { color: var(--bad); font-weight: 600; } .error { color: var(--bad); }
.columns { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 220px), 1fr)); gap: 1rem; }
ul { padding-left: 1.1rem; margin: .2rem 0; } .runs { list-style: none; padding: 0; }
.run { border-bottom: 1px solid var(--line); padding: .4rem 0; }
.bar { width: 100%; height: .7rem; accent-color: var(--accent); }
.tokens { max-height: 6rem; overflow: auto; white-space: pre-wrap; margin: .2rem 0; }
pre, code { font: 12px/1.4 ui-monospace, monospace; } pre { background: var(--bg); padding: .4rem; border-radius: 4px; overflow: auto; max-height: 18rem; }
table { width: 100%; border-collapse: collapse; } th, td { text-align: left; padding: .25rem .4rem; border-bottom: 1px solid var(--line); } th { white-space: nowrap; }
tbody tr { cursor: pointer; } tr.failed .outcome { color: var(--bad); }
.filters { display: flex; flex-wrap: wrap; gap: .4rem; margin-bottom: .5rem; }
input, select, button { font: inherit; padding: .25rem .5rem; border: 1px solid var(--line); border-radius: 4px; background: var(--card); color: var(--fg); }
#search { width: 100%; margin-bottom: .4rem; }
.badge { font-size: .75rem; padding: 0 .35rem; border-radius: 3px; border: 1px solid var(--line); }
.status-blocked .badge { color: var(--bad); border-color: var(--bad); }
.detail { border-top: 2px solid var(--accent); margin-top: .8rem; padding-top: .4rem; }
.events { max-height: 20rem; overflow: auto; }
.files .name, .detail code { overflow-wrap: anywhere; } .file-view { white-space: pre-wrap; overflow-wrap: anywhere; } .link { cursor: pointer; color: var(--accent); }
.spark { width: 100px; height: 20px; } .spark polyline { fill: none; stroke: var(--accent); stroke-width: 1.5; }
.inline { display: inline; margin-left: auto; }
.login { display: block; max-width: 360px; margin: 10vh auto; } .login form { display: grid; gap: .5rem; }
`;
