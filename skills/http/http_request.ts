/**
 * `http_request`: one HTTP request to an allow-listed host, performed by the
 * host's egress broker through `ctx.fetch`. The broker resolves the name in
 * the host, refuses loopback, private, link-local and metadata addresses
 * (unless the operator allows the host), checks every redirect hop, and adds
 * the operator's secrets for that host; this tool never opens a connection
 * itself and never sees those secrets.
 *
 * @module
 */

import { Buffer } from "node:buffer";
import type { FetchResponse, ToolDef } from "../../sandbox/sdk/types.ts";

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
const REDACTED = "[REDACTED]";

/**
 * The toolkit's config as a call gets it: the host checked it against
 * toolkit.ts's schema and filled in its defaults (and refuses the call
 * when it does not fit). `allowed_hosts` is the egress broker's to apply.
 */
interface HttpConfig {
  headers?: Record<string, string>;
  max_body_bytes: number;
}

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
    const cfg = ctx.config as unknown as HttpConfig;
    const configured = cfg.headers ?? {};
    const method = args.method ?? "GET";
    if (args.body !== undefined && args.json !== undefined) {
      throw new TypeError("Give body or json, not both");
    }
    const headers: Record<string, string> = { ...configured };
    for (const [k, v] of Object.entries(args.headers ?? {})) headers[k] = v;
    let body = args.body;
    if (args.json !== undefined) {
      body = JSON.stringify(args.json);
      const named = Object.keys(headers).some((k) =>
        k.toLowerCase() === "content-type"
      );
      if (!named) headers["content-type"] = "application/json";
    }
    ctx.signal.throwIfAborted();
    const response: FetchResponse = await ctx.fetch({
      url: args.url,
      method,
      headers,
      body: method === "GET" || method === "HEAD" ? undefined : body,
      redirect: args.follow_redirects === false ? "manual" : "follow",
    });
    // The server chose the redirect targets and the status text: it may
    // have put a configured header's value in them.
    const forms = secretForms(Object.values(configured));
    const url = redactUrl(response.url, forms.patterns);
    const statusText = redactText(response.statusText, forms.patterns);
    // `redirects` starts with the URL asked for; the last hop is the answer's.
    for (const hop of [...response.redirects, response.url].slice(1)) {
      ctx.status(`Redirected to ${redactUrl(hop, forms.patterns)}`);
    }
    // The configured headers are redacted from the body before it is cut,
    // text or not: a cut through one leaves a start of it that no later
    // scrubber knows for a secret, so that start is cut off too. The body
    // is read one character per byte (latin1): a form's UTF-8 bytes match
    // wherever they stand.
    const raw = Uint8Array.fromBase64(response.bodyBase64);
    let answer = redactText(
      Buffer.from(raw.buffer, raw.byteOffset, raw.length).toString("latin1"),
      forms.patterns,
    );
    let truncated = response.truncated;
    if (answer.length > cfg.max_body_bytes) {
      answer = answer.slice(0, cfg.max_body_bytes);
      truncated = true;
    }
    if (truncated) answer = withoutFormStart(answer, forms);
    const bytes = Buffer.from(answer, "latin1");
    const contentType = response.headers["content-type"] ?? "";
    const textual = isTextual(contentType, bytes);
    const outHeaders: Record<string, string> = {};
    for (const [k, v] of Object.entries(response.headers)) {
      outHeaders[k] = redactText(v, forms.patterns);
    }
    const data = {
      url,
      status: response.status,
      status_text: statusText,
      headers: outHeaders,
      body: textual ? new TextDecoder().decode(bytes) : bytes.toBase64(),
      body_encoding: textual ? "text" : "base64",
      truncated,
    };
    return {
      __skillbox_output: true,
      data,
      summary:
        `${method} ${url} → ${response.status} ${statusText} (${bytes.length} bytes${
          truncated ? ", truncated" : ""
        })`,
    };
  },
} satisfies ToolDef<Args>;

function isTextual(contentType: string, bytes: Uint8Array): boolean {
  const ct = contentType.toLowerCase();
  if (
    /^text\/|json|xml|javascript|ecmascript|x-www-form-urlencoded|csv|yaml|toml|graphql/
      .test(ct)
  ) return true;
  // Untyped: text unless it has a NUL byte near the start, like git.
  return ct === "" && !bytes.subarray(0, 8192).includes(0);
}

/**
 * The forms a configured header value may come back in, longest first: as
 * sent, a credential after its scheme ("Bearer abc" may be echoed as "abc"),
 * and a Basic credential decoded ("user:pass", and "pass"), each also
 * percent-encoded and JSON-escaped as an echoing server writes it (PHP
 * writes "/" as "\/"). Short values would redact ordinary text and protect
 * nothing. Each is matched with any of its characters written as an echo
 * may write it ({@link charPattern}), so an escaped character in the middle
 * of one hides nothing.
 */
function secretForms(values: string[]): SecretForms {
  const forms = new Set<string>();
  for (const value of values) {
    const afterScheme = value.replace(/^\S+\s+/, "");
    for (const form of [value, afterScheme, ...decodedBasic(value)]) {
      const json = JSON.stringify(form).slice(1, -1);
      forms.add(form).add(encodeURIComponent(form)).add(json)
        .add(json.replaceAll("/", "\\/"));
    }
  }
  const text = [...forms].filter((s) => s.length >= 6)
    .sort((a, b) => b.length - a.length);
  const written = new Map<string, string>();
  const chars = text.map((s) =>
    Array.from(s, (c) => written.getOrInsertComputed(c, charPattern))
  );
  // The start of a form: its first characters, each followed by the next.
  const starts = chars.map((c) =>
    c.slice(0, -1).reduceRight((rest, p) => p + (rest && `(?:${rest})?`), "")
  );
  return {
    patterns: chars.map((c) => new RegExp(c.join(""), "g")),
    begun: text.length > 0 ? new RegExp(`(?:${starts.join("|")})$`) : null,
    reach: (text[0]?.length ?? 0) * 24,
  };
}

/** The configured header values as {@link secretForms} matches them. */
interface SecretForms {
  /** Each form, longest first (one that begins another is cut after it). */
  patterns: RegExp[];
  /** The start of a form at a text's end; null when there is no form. */
  begun: RegExp | null;
  /**
   * How much of a text's end a form's start may take, zeros aside: the
   * longest form, each character in its longest writing (`&DiacriticalGrave;`).
   */
  reach: number;
}

/**
 * One character as an echo may write it: itself (a header or a decoded
 * URL), its UTF-8 bytes read one per byte (the body), a JSON "\u" escape
 * (encoders that escape non-ASCII or "unsafe" characters), or an HTML
 * character reference by number, any leading zeros, or by name, the ";"
 * optional as browsers read them (a page that shows the request).
 */
function charPattern(char: string): string {
  const code = char.codePointAt(0)!;
  const written = new Set(
    [char, Buffer.from(char).toString("latin1")].map(RegExp.escape),
  );
  // A character past U+FFFF is escaped as its two UTF-16 halves.
  written.add(
    Array.from(
      { length: char.length },
      (_, i) => `\\\\u${hexPattern(char.charCodeAt(i), 4)}`,
    ).join(""),
  );
  const references = [
    `&#0*${code}`,
    `&#[xX]0*${hexPattern(code)}`,
    ...(NAMED.get(char) ?? []).map((entry) => `&${entry.slice(1)}`),
  ];
  return `(?:${[...written].join("|")}|(?:${references.join("|")});?)`;
}

// HTML's names for ASCII characters (the WHATWG list), by character.
const NAMED = Map.groupBy(
  [
    '\tTab \nNewLine !excl "quot "QUOT #num $dollar %percnt &amp &AMP',
    "'apos (lpar )rpar *ast *midast +plus ,comma .period /sol :colon ;semi",
    "<lt <LT =equals >gt >GT ?quest @commat [lsqb [lbrack \\bsol ]rsqb",
    "]rbrack ^Hat _lowbar _UnderBar `grave `DiacriticalGrave {lcub {lbrace",
    "|verbar |vert |VerticalLine }rcub }rbrace",
  ].join(" ").split(" "),
  (entry) => entry[0]!,
);

/** A number in hexadecimal, at least `width` digits, in either case. */
function hexPattern(n: number, width = 0): string {
  return n.toString(16).padStart(width, "0")
    .replace(/[a-f]/g, (d) => `[${d}${d.toUpperCase()}]`);
}

/** A `Basic` header's credential decoded, and its password alone. */
function decodedBasic(value: string): string[] {
  const base64 = /^basic\s+(\S+)$/i.exec(value)?.[1];
  if (base64 === undefined) return [];
  try {
    const pair = new TextDecoder().decode(Uint8Array.fromBase64(base64));
    return [pair, pair.slice(pair.indexOf(":") + 1)];
  } catch {
    return []; // not base64: the forms as sent still cover it
  }
}

/** The text with every form replaced by the marker. */
function redactText(text: string, forms: RegExp[]): string {
  return forms.reduce((out, form) => out.replace(form, REDACTED), text);
}

/**
 * A URL with every form replaced by the marker, also where its server
 * percent-encoded a form in any other way (lower-case hex, letters): then
 * the URL is given decoded, since its encoded form cannot be told apart.
 */
function redactUrl(url: string, forms: RegExp[]): string {
  const raw = redactText(url, forms);
  const decoded = raw.replace(/(?:%[0-9a-f]{2})+/gi, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      // Not UTF-8 as a whole: a stray byte must not hide the ASCII ones.
      return run.replace(
        /%([0-7][0-9a-f])/gi,
        (_, hex) => String.fromCharCode(parseInt(hex, 16)),
      );
    }
  });
  const redacted = redactText(decoded, forms);
  return redacted === decoded ? raw : redacted;
}

/**
 * A cut body without the start of a form it may end with, in any writing
 * of its characters, nor a writing the cut ran through (it may be a form's
 * next character).
 */
function withoutFormStart(body: string, forms: SecretForms): string {
  if (forms.begun === null) return body;
  // Only the end a form's start can take: a reference may be padded with
  // any number of zeros, so they are not counted.
  let from = body.length;
  for (let left = forms.reach; from > 0 && left > 0; from--) {
    if (body[from - 1] !== "0") left--;
  }
  const tail = body.slice(from).replace(PARTIAL, "");
  return body.slice(0, from + (forms.begun.exec(tail)?.index ?? tail.length));
}

// The start of a writing (see charPattern) at a text's end: a reference,
// a "\u" escape, or a character's first UTF-8 bytes without the rest.
const PARTIAL =
  /(?:&#?[0-9A-Za-z]*|\\(?:u[0-9A-Fa-f]{0,3})?|[\xc2-\xdf]|[\xe0-\xef][\x80-\xbf]?|[\xf0-\xf4][\x80-\xbf]{0,2})$/;
