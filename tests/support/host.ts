/**
 * Starts a host on a free port for a test, and stops it with `await using`.
 *
 * @module
 */

import { createHost, type Host, type HostOptions } from "../../runtime/host.ts";

/** A listening test host. */
export interface TestHost extends AsyncDisposable {
  readonly host: Host;
  /** `http://127.0.0.1:PORT` */
  readonly url: string;
  /** `ws://127.0.0.1:PORT/a2e` */
  readonly wsUrl: string;
  /** `http://127.0.0.1:PORT/a2e` */
  readonly sseUrl: string;
}

/**
 * Starts a host on 127.0.0.1 with a free port.
 *
 * @example
 * ```ts ignore
 * await using t = await startHost();
 * ```
 */
export async function startHost(options: HostOptions = {}): Promise<TestHost> {
  // Transport tests need no skills: serve only what the test plugs in.
  const host = createHost({ capabilities: [], ...options });
  const { url } = await host.listen({ hostname: "127.0.0.1", port: 0 });
  return {
    host,
    url,
    wsUrl: url.replace("http", "ws") + "/a2e",
    sseUrl: url + "/a2e",
    [Symbol.asyncDispose]: () => host.close({ timeoutSeconds: 1 }),
  };
}
