/**
 * `http_request`: one HTTP request to an allow-listed host.
 *
 * @module
 */

import type { ToolDef } from "../../sandbox/sdk/types.ts";
import { isAllowedHost, isPrivateHost, isPrivateIp } from "./_net.ts";
import { withSummary } from "./_output.ts";

interface Args {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  json?: unknown;
  follow_redirects?: boolean;
}

const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];
const MAX_REDIRECTS = 5;
const DEFAULT_MAX_BODY = 1_000_000;
const REDACTED = "[REDACTED]";

export default {
  kind: "tool",
  name: "http_request",
  toolkit: "http",
  description:
    "Send an HTTP request (GET, POST, PUT, PATCH, DELETE, ...) to an allowed host and get the status, response headers and body. Use it to call REST/JSON APIs, fetch web pages or documents, or trigger webhooks.",
  tags: ["http", "fetch", "api", "web", "request"],
  input: {
    type: "object",
    properties: {
      url: { type: "string", description: "Absolute http(s) URL" },
      method: {
        type: "string",
        enum: METHODS,
        description: 'HTTP method (default "GET")',
      },
      headers: {
        type: "object",
        additionalProperties: { type: "string" },
        description: "Request headers, added to the configured defaults",
      },
      body: { type: "string", description: "Request body text" },
      json: {
        description:
          "A JSON value to send as the body, with Content-Type application/json (instead of body)",
      },
      follow_redirects: {
        type: "boolean",
        description:
          `Follow up to ${MAX_REDIRECTS} redirects to allowed hosts (default true)`,
      },
    },
    required: ["url"],
    additionalProperties: false,
  },
  output: {
    type: "object",
    properties: {
      url: { type: "string", description: "Final URL after redirects" },
      status: { type: "integer" },
      status_text: { type: "string" },
      headers: { type: "object", additionalProperties: { type: "string" } },
      body: { type: "string" },
      body_encoding: { type: "string", enum: ["text", "base64"] },
      truncated: { type: "boolean" },
    },
  },
  async run(args, ctx) {
    const cfg = httpConfig(ctx.config);
    const method = (args.method ?? "GET").toUpperCase();
    if (!METHODS.includes(method)) {
      throw new TypeError(`Method "${args.method}" is not supported`);
    }
    if (args.body !== undefined && args.json !== undefined) {
      throw new TypeError("Give body or json, not both");
    }
    let url = parseUrl(args.url);
    await checkTarget(url, cfg, ctx.signal);

    const callerHeaders = new Headers(args.headers ?? {});
    let body: string | undefined = args.body;
    if (args.json !== undefined) {
      body = JSON.stringify(args.json);
      if (!callerHeaders.has("content-type")) {
        callerHeaders.set("content-type", "application/json");
      }
    }
    const origin = url.origin;
    let currentMethod = method;
    let response: Response | undefined;
    for (let hop = 0;; hop++) {
      const headers = new Headers();
      // Credentials stay with the origin they were configured for: a
      // redirect to another host does not carry them along.
      if (url.origin === origin) {
        for (const [k, v] of Object.entries(cfg.headers)) headers.set(k, v);
      }
      callerHeaders.forEach((v, k) => headers.set(k, v));
      response = await fetch(url, {
        method: currentMethod,
        headers,
        body: currentMethod === "GET" || currentMethod === "HEAD"
          ? undefined
          : body,
        redirect: "manual",
        signal: ctx.signal,
      });
      const location = response.headers.get("location");
      if (
        args.follow_redirects === false || location === null ||
        response.status < 300 || response.status > 399
      ) break;
      if (hop >= MAX_REDIRECTS) {
        await response.body?.cancel();
        throw new Error(`Too many redirects (more than ${MAX_REDIRECTS})`);
      }
      await response.body?.cancel();
      url = parseUrl(new URL(location, url).href);
      await checkTarget(url, cfg, ctx.signal);
      ctx.status(`Redirected (${response.status}) to ${url.href}`);
      if (
        response.status === 303 ||
        ((response.status === 301 || response.status === 302) &&
          currentMethod === "POST")
      ) {
        currentMethod = "GET";
        body = undefined;
      }
    }

    const { bytes, truncated } = await readCapped(response, cfg.maxBody);
    const contentType = response.headers.get("content-type") ?? "";
    const textual = isTextual(contentType, bytes);
    const redact = redactor(Object.values(cfg.headers));
    const headers: Record<string, string> = {};
    response.headers.forEach((v, k) => headers[k] = redact(v));
    const data = {
      url: url.href,
      status: response.status,
      status_text: response.statusText,
      headers,
      body: textual ? redact(new TextDecoder().decode(bytes)) : base64(bytes),
      body_encoding: textual ? "text" : "base64",
      truncated,
    };
    return withSummary(
      data,
      `${method} ${url.href} → ${response.status} ${response.statusText} (${bytes.length} bytes${
        truncated ? ", truncated" : ""
      })`,
    );
  },
} satisfies ToolDef<Args>;

interface HttpConfig {
  allowed: string[];
  headers: Record<string, string>;
  allowPrivate: boolean;
  maxBody: number;
}

function httpConfig(config: Record<string, unknown>): HttpConfig {
  if (!Array.isArray(config.allowed_hosts)) {
    throw new Error(
      'The http toolkit is not configured: set "allowed_hosts" to the hosts it may reach',
    );
  }
  const headers: Record<string, string> = {};
  if (config.headers && typeof config.headers === "object") {
    for (const [k, v] of Object.entries(config.headers)) {
      if (typeof v === "string") headers[k] = v;
    }
  }
  return {
    allowed: config.allowed_hosts.filter((x): x is string =>
      typeof x === "string"
    ),
    headers,
    allowPrivate: config.allow_private === true,
    maxBody: typeof config.max_body_bytes === "number"
      ? config.max_body_bytes
      : DEFAULT_MAX_BODY,
  };
}

function parseUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new TypeError(`"${text}" is not an absolute URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new TypeError(
      `Only http and https URLs are supported, got "${url.protocol}"`,
    );
  }
  if (url.username || url.password) {
    throw new TypeError(
      "Credentials in the URL are not supported: use headers",
    );
  }
  return url;
}

async function checkTarget(
  url: URL,
  cfg: HttpConfig,
  signal: AbortSignal,
): Promise<void> {
  if (!isAllowedHost(url, cfg.allowed)) {
    throw new Error(
      `Host "${url.host}" is not allowed: allowed hosts are ${
        cfg.allowed.length
          ? cfg.allowed.map((h) => `"${h}"`).join(", ")
          : "none"
      }`,
    );
  }
  if (cfg.allowPrivate) return;
  if (isPrivateHost(url.hostname)) {
    throw new Error(
      `Host "${url.hostname}" is a loopback or private address: refused unless the toolkit sets allow_private`,
    );
  }
  // A public name can still point inside (DNS rebinding, internal names);
  // check what it resolves to. Without DNS permission the sandbox's net
  // grant (allowed_hosts) is the boundary, so skip quietly.
  if (/^[\d.]+$|^\[/.test(url.hostname)) return;
  for (const type of ["A", "AAAA"] as const) {
    let ips: string[];
    try {
      ips = await Deno.resolveDns(url.hostname, type, { signal });
    } catch {
      continue;
    }
    const bad = ips.find(isPrivateIp);
    if (bad) {
      throw new Error(
        `Host "${url.hostname}" resolves to the private address ${bad}: refused unless the toolkit sets allow_private`,
      );
    }
  }
}

async function readCapped(
  response: Response,
  max: number,
): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  if (!response.body) return { bytes: new Uint8Array(), truncated: false };
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  const reader = response.body.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    if (size + value.length > max) {
      chunks.push(value.subarray(0, max - size));
      size = max;
      truncated = true;
      await reader.cancel();
      break;
    }
    chunks.push(value);
    size += value.length;
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.length;
  }
  return { bytes, truncated };
}

function isTextual(contentType: string, bytes: Uint8Array): boolean {
  const ct = contentType.toLowerCase();
  if (
    /^text\/|json|xml|javascript|ecmascript|x-www-form-urlencoded|csv|yaml|toml|graphql/
      .test(ct)
  ) return true;
  if (ct === "") return !bytes.subarray(0, 8192).includes(0);
  return false;
}

function base64(bytes: Uint8Array): string {
  let bin = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(bin);
}

/** Replaces configured secret header values wherever a server echoes them. */
function redactor(secrets: string[]): (s: string) => string {
  // Short values would redact ordinary text and protect nothing.
  const list = secrets.filter((s) => s.length >= 6);
  // A value like "Bearer abc" may be echoed without its scheme.
  for (const s of [...list]) {
    const token = s.replace(/^\S+\s+/, "");
    if (token !== s && token.length >= 6) list.push(token);
  }
  return (text) => {
    let out = text;
    for (const s of list) out = out.split(s).join(REDACTED);
    return out;
  };
}
