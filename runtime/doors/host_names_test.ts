import assert from "node:assert/strict";
import { HostNames } from "./host_names.ts";

function request(headers: Record<string, string>, url = "http://h/"): Request {
  return new Request(url, { headers });
}

Deno.test("HostNames lets in the loopback names on any port, in any spelling", () => {
  const names = new HostNames({ hostname: "127.0.0.1" });
  for (
    const host of [
      "127.0.0.1",
      "127.0.0.1:8787",
      "localhost:1",
      "LOCALHOST:8787",
      "localhost.:8787",
      "[::1]:8787",
      "[0:0:0:0:0:0:0:1]",
      "[::ffff:127.0.0.1]:8787",
    ]
  ) {
    assert.equal(names.refusal(request({ host })), undefined, host);
  }
});

Deno.test("HostNames refuses every other name, and what is no host at all", () => {
  const names = new HostNames({ hostname: "127.0.0.1" });
  for (
    const host of [
      "a.evil:8787",
      "127.0.0.1.nip.io",
      "localhost.evil",
      "127.0.0.2:8787",
      "evil@127.0.0.1",
      "127.0.0.1/x",
      "127.0.0.1%2f",
      "[::2]",
      "",
      "0.0.0.0:8787",
    ]
  ) {
    const why = names.refusal(request({ host }));
    assert.equal(
      why,
      `Host "${host}" is not one this host answers to: add it to listen.allowed_hosts`,
      host,
    );
  }
});

Deno.test("HostNames falls back on the URL's host when there is no Host header", () => {
  const names = new HostNames({ hostname: "127.0.0.1" });
  assert.equal(names.refusal(new Request("http://localhost:9/x")), undefined);
  assert.match(names.refusal(new Request("http://x/health"))!, /Host "x"/);
});

Deno.test("HostNames adds the listen name and the operator's names, with or without port", () => {
  const names = new HostNames({
    hostname: "box.lan",
    allowedHosts: ["proxy.example", "pinned.example:8443", "[fd00::1]"],
  });
  for (
    const host of [
      "box.lan:8787",
      "proxy.example",
      "Proxy.Example.:443",
      "pinned.example:8443",
      "[fd00::1]:80",
    ]
  ) {
    assert.equal(names.refusal(request({ host })), undefined, host);
  }
  for (const host of ["pinned.example", "pinned.example:8444", "box.lan2"]) {
    assert.ok(names.refusal(request({ host })), host);
  }
  assert.throws(
    () => new HostNames({ hostname: "x", allowedHosts: ["a/b"] }),
    /Invalid allowed host "a\/b"/,
  );
});

Deno.test("HostNames lets in the wildcard listener's interface addresses", () => {
  const names = new HostNames({ hostname: "0.0.0.0" });
  const address = Deno.networkInterfaces().find((i) =>
    i.family === "IPv4" && i.address !== "127.0.0.1"
  )?.address;
  if (address === undefined) return;
  assert.ok(names.refusal(request({ host: `${address}:8787` })));
  names.listeningOn("0.0.0.0");
  assert.equal(names.refusal(request({ host: `${address}:8787` })), undefined);
});

Deno.test("HostNames wants a browser's Origin to be the host's own, or an allowed one", () => {
  const names = new HostNames({
    hostname: "127.0.0.1",
    allowedOrigins: ["https://app.example", "http://localhost:5173"],
  });
  const ok = [
    ["127.0.0.1:8787", "http://127.0.0.1:8787"],
    ["localhost:8787", "http://LOCALHOST:8787"],
    ["localhost:8787", "https://app.example:443"],
    ["localhost:8787", "http://localhost:5173"],
  ];
  for (const [host, origin] of ok) {
    assert.equal(
      names.refusal(request({ host: host!, origin: origin! })),
      undefined,
      origin,
    );
  }
  const refused = [
    ["127.0.0.1:8787", "http://evil.example"],
    ["127.0.0.1:8787", "http://127.0.0.1:9999"],
    ["127.0.0.1:8787", "http://localhost:8787"],
    ["127.0.0.1:8787", "file://"],
    ["127.0.0.1:8787", "not an origin"],
    ["127.0.0.1:8787", "http://127.0.0.1:8787@evil.example"],
  ];
  for (const [host, origin] of refused) {
    assert.equal(
      names.refusal(request({ host: host!, origin: origin! })),
      `Origin "${origin}" is not this host's: add it to listen.allowed_origins`,
    );
  }
  assert.match(
    names.refusal(request({ host: "127.0.0.1:8787", origin: "null" }))!,
    /^Origin "null" is refused/,
  );
  assert.throws(
    () => new HostNames({ hostname: "x", allowedOrigins: ["app.example"] }),
    /Invalid allowed origin/,
  );
});

Deno.test("HostNames keeps an https origin's port 80 apart from its default port", () => {
  const names = new HostNames({
    hostname: "127.0.0.1",
    allowedOrigins: ["https://app.example", "https://other.example:80"],
  });
  const refusal = (origin: string) =>
    names.refusal(request({ host: "127.0.0.1:8787", origin }));
  assert.equal(refusal("https://other.example:80"), undefined);
  for (const origin of ["https://app.example:80", "https://other.example"]) {
    assert.equal(
      refusal(origin),
      `Origin "${origin}" is not this host's: add it to listen.allowed_origins`,
    );
  }
});

Deno.test("HostNames refuses a browser request from another page that sends no Origin, unless it is a navigation", () => {
  const names = new HostNames({ hostname: "127.0.0.1" });
  const host = "127.0.0.1:8787";
  assert.match(
    names.refusal(
      request({
        host,
        "sec-fetch-site": "cross-site",
        "sec-fetch-mode": "no-cors",
      }),
    )!,
    /cross-site/,
  );
  assert.equal(
    names.refusal(
      request({
        host,
        "sec-fetch-site": "cross-site",
        "sec-fetch-mode": "navigate",
      }),
    ),
    undefined,
  );
  assert.equal(
    names.refusal(request({ host, "sec-fetch-site": "same-origin" })),
    undefined,
  );
  assert.match(
    names.refusal(request({ host, "sec-fetch-site": "same-site" }))!,
    /^A same-site browser request without an Origin is refused$/,
  );
});
