/**
 * The http toolkit: HTTP requests to allow-listed public hosts, with
 * default headers (such as API tokens) the agent never sees.
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
    "Make HTTP requests to allow-listed hosts (REST APIs, web pages, webhooks). Configure `allowed_hosts`, and `headers` for credentials that are sent but never shown.",
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
          "Headers added to every request (e.g. Authorization); their values are redacted from responses",
      },
      allow_private: {
        type: "boolean",
        default: false,
        description:
          "Allow loopback, private and link-local addresses (localhost, 10.x, 192.168.x, ...)",
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
    "- Only `allowed_hosts` are reachable; localhost and private networks are refused unless the toolkit allows them.",
    "- Configured default headers (credentials) are added for you; do not ask for or invent tokens.",
    "- Send JSON with `json` (sets Content-Type) rather than hand-encoding `body`.",
    "- Bodies are capped; `truncated` tells you when. Binary bodies come back base64 (`body_encoding`).",
  ].join("\n"),
} satisfies ToolkitDef;
