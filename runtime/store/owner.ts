/**
 * Whose a run is: the owner the run history keeps with each run, so the
 * console shows a token only its own sessions' work. An owner is a short
 * fingerprint of the configured token the session authenticated with,
 * never the token, and not the positional label (`token 2`) either: a
 * label moves to another token when the operator removes or reorders
 * `tokens`, and the history would move with it. A run with no owner (the
 * operator's own in-process or stdio calls, a host without tokens, or a row
 * written before owners were kept) is shown to console admins only.
 *
 * @module
 */

import { createHash } from "node:crypto";

/** Whose runs a console request may see: every run, or one owner's. */
export type RunScope = "all" | { readonly owner: string };

/**
 * The owner recorded for runs of sessions that authenticated with a token.
 * 32 bits of SHA-256 over the token: enough to keep the configured tokens
 * apart, too few to confirm a guess of a long random token offline.
 *
 * @param token a configured token
 * @returns its owner, `sha256:` and 8 hex digits
 * @example Stable and not the token
 * ```ts
 * import { ownerOf } from "./owner.ts";
 * import assert from "node:assert/strict";
 * assert.equal(ownerOf("alpha-token"), ownerOf("alpha-token"));
 * assert.notEqual(ownerOf("alpha-token"), ownerOf("beta-token"));
 * assert.match(ownerOf("alpha-token"), /^sha256:[0-9a-f]{8}$/);
 * ```
 */
export function ownerOf(token: string): string {
  const digest = createHash("sha256").update("skillbox run owner\0")
    .update(token).digest("hex");
  return `sha256:${digest.slice(0, 8)}`;
}

/**
 * Whether a scope may see a run of this owner.
 *
 * @param scope the viewer's scope
 * @param owner the run's owner (null: the operator's, or unknown)
 * @returns true when the viewer may see it
 * @example Admins see everything, a token its own runs only
 * ```ts
 * import { mayView } from "./owner.ts";
 * import assert from "node:assert/strict";
 * assert.equal(mayView("all", null), true);
 * assert.equal(mayView({ owner: "sha256:0a0b0c0d" }, "sha256:0a0b0c0d"), true);
 * assert.equal(mayView({ owner: "sha256:0a0b0c0d" }, null), false);
 * ```
 */
export function mayView(
  scope: RunScope,
  owner: string | null | undefined,
): boolean {
  return scope === "all" || (owner != null && owner === scope.owner);
}
