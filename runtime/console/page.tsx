/**
 * The console's HTML, rendered on the server with Hono's JSX: the dashboard
 * shell (the client script fills it from `/api/*` and keeps it live) and the
 * login form. No inline script or style: the page's CSP allows only the
 * host's own files.
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
      <table>
        <thead>
          <tr>
            <th>ended</th>
            <th>kind</th>
            <th>name</th>
            <th>outcome</th>
            <th>ms</th>
            <th>transport</th>
            <th>host</th>
          </tr>
        </thead>
        <tbody id="history-rows"></tbody>
      </table>
      <button id="more" type="button" hidden>Older…</button>
      <div id="detail" class="detail" hidden></div>
    </Section>
  );
}

// Per tool and skill numbers, with a latency chart each.
function StatsSection() {
  return (
    <Section id="stats" title="Per tool and skill (last hour)">
      <table>
        <thead>
          <tr>
            <th>name</th>
            <th>calls</th>
            <th>errors</th>
            <th>p50 ms</th>
            <th>p95 ms</th>
            <th>latency</th>
          </tr>
        </thead>
        <tbody id="stats-rows"></tbody>
      </table>
    </Section>
  );
}

// Live sessions, sandbox processes and the fleet's hosts.
function SystemSection() {
  return (
    <Section id="system" title="Sessions and sandboxes">
      <div class="columns">
        <div>
          <h3>Sessions</h3>
          <ul id="sessions"></ul>
        </div>
        <div>
          <h3>Sandbox processes</h3>
          <ul id="processes"></ul>
        </div>
        <div>
          <h3>Hosts</h3>
          <ul id="hosts"></ul>
        </div>
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
            <div>
              <h3>Skills</h3>
              <ul id="skills"></ul>
            </div>
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
