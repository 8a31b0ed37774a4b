/**
 * The http toolkit: HTTP requests to allow-listed public hosts, performed by
 * the host's egress broker (`ctx.fetch`). Operator credentials belong in
 * `egress.secrets` of `skillbox.jsonc`, bound to their host; the `headers`
 * here are a session's own defaults, sent to every allowed host.
 *
 * @module
 */

import type { ToolkitDef } from "../../sandbox/sdk/types.ts";

export default {
  kind: "toolkit",
  name: "http",
  alias: "HTTP",
  category: "network",
  description:
    "Make HTTP requests to allow-listed hosts (REST APIs, web pages, webhooks). Configure `allowed_hosts`, and `headers` for the session's own credentials (sent to every allowed host, never shown); operator credentials are bound to their host in the host's egress settings.",
  tags: ["http", "web", "api", "network"],
  config: {
    type: "object",
    properties: {
      allowed_hosts: {
        type: "array",
        items: { type: "string" },
        description:
          'Hosts requests may go to: "api.example.com" (any port) or "api.example.com:8443"; "*" allows every public host',
      },
      headers: {
        type: "object",
        additionalProperties: { type: "string" },
        // Typically Authorization or API-key headers: never echoed.
        secret: true,
        description:
          "Headers added to every request to an allowed host (e.g. the session's own Authorization); their values are redacted from responses",
      },
      max_body_bytes: {
        type: "integer",
        minimum: 1,
        default: 1_000_000,
        description: "Most response body bytes returned",
      },
    },
    required: ["allowed_hosts"],
    additionalProperties: false,
  },
  permissions: (c) => ({
    net: Array.isArray(c.allowed_hosts)
      ? c.allowed_hosts.filter((x): x is string => typeof x === "string")
      : [],
  }),
  prompt: [
    "`http_request` sends one request and returns status, headers and body text.",
    "- Only `allowed_hosts` are reachable; localhost and private networks are refused unless the operator allows the host.",
    "- Configured default headers (credentials) are added for you; do not ask for or invent tokens.",
    "- Send JSON with `json` (sets Content-Type) rather than hand-encoding `body`.",
    "- Bodies are capped; `truncated` tells you when. Binary bodies come back base64 (`body_encoding`).",
  ].join("\n"),
} satisfies ToolkitDef;
