/**
 * The script the browser test's page runs in headless Chromium. It imports
 * the bundled client (`client.js`, next to this script), drives a real host
 * through it and POSTs a {@link BrowserReport} to `/report`.
 *
 * The page's URL carries `ws` (the host's WebSocket URL) and `token`. Only
 * the client's types are imported here, so this script's bundle holds none of
 * the client: the page exercises the client's own bundle.
 *
 * @module
 */

import type * as ClientModule from "../../client/mod.ts";

/** What the page saw, in the order it did it. */
export interface BrowserReport {
  /** `navigator.userAgent`, to prove a browser ran this. */
  userAgent: string;
  /** Whether a `Deno` global existed (it must not). */
  hasDeno: boolean;
  /** Names of the steps that finished, in order. */
  steps: string[];
  /** The first thrown error as `name: message` plus its stack, if any. */
  failure: string | null;
  handshake?: {
    sessionId: string;
    acceptedCaps: readonly string[];
    maxParallel: number;
  };
  ping?: { roundTripMs: number; uptimeSeconds: number };
  tools?: string[];
  call?: {
    events: Array<{ kind: string; seq: number; data: unknown }>;
    success: boolean;
    data: unknown;
    toolName: string;
  };
  unknownTool?: {
    isSkillboxError: boolean;
    name: string;
    code: string;
    message: string;
  };
  close?: { code: number; reason: string };
}

async function run(report: BrowserReport): Promise<void> {
  const params = new URL(location.href).searchParams;
  const clientUrl = new URL("client.js", import.meta.url).href;
  const { connect, SkillboxError } =
    (await import(clientUrl)) as typeof ClientModule;
  report.steps.push("import");

  const client = await connect(params.get("ws") ?? "", {
    token: params.get("token") ?? "",
    agentId: "browser",
    caps: ["tools"],
  });
  try {
    report.handshake = {
      sessionId: client.sessionId,
      acceptedCaps: client.acceptedCaps,
      maxParallel: client.maxParallel,
    };
    report.steps.push("handshake");

    const pong = await client.ping();
    report.ping = {
      roundTripMs: pong.roundTripMs,
      uptimeSeconds: pong.uptimeSeconds,
    };
    report.steps.push("ping");

    report.tools = (await client.tools.list()).map((tool) => tool.name);
    report.steps.push("tools.list");

    const call = client.tools.call("count", { n: 3 });
    const events: NonNullable<BrowserReport["call"]>["events"] = [];
    for await (const event of call.events) {
      events.push({ kind: event.kind, seq: event.seq, data: event.data });
    }
    const result = await call;
    report.call = {
      events,
      success: result.success,
      data: result.data,
      toolName: result.toolName,
    };
    report.steps.push("tools.call");

    try {
      await client.tools.call("no_such_tool", {});
      report.steps.push("unknown tool resolved");
    } catch (error) {
      report.unknownTool = {
        isSkillboxError: error instanceof SkillboxError,
        name: error instanceof Error ? error.name : typeof error,
        code: error instanceof SkillboxError ? error.code : "",
        message: error instanceof Error ? error.message : String(error),
      };
      report.steps.push("unknown tool");
    }
  } finally {
    const info = await client.close();
    report.close = { code: info.code, reason: info.reason };
    report.steps.push("close");
  }
}

const report: BrowserReport = {
  userAgent: navigator.userAgent,
  hasDeno: "Deno" in globalThis,
  steps: [],
  failure: null,
};
try {
  await run(report);
} catch (error) {
  report.failure = error instanceof Error
    ? `${error.name}: ${error.message}\n${error.stack ?? ""}`
    : String(error);
}
await fetch(new URL("/report", location.href), {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify(report),
});
