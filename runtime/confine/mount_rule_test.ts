import assert from "node:assert/strict";
import { join } from "node:path";
import { checkMount, mountable, mountRefusal } from "./mount_rule.ts";

const RULE = {
  home: "/home/ann",
  protect: ["/srv/app/skillbox.jsonc", "/srv/app/.skillbox"],
};

Deno.test("mountRefusal() refuses the root, system and home folders as a whole, allows inside", () => {
  for (
    const path of [
      "/",
      "/home",
      "/root",
      "/tmp",
      "/var",
      "/usr",
      "/opt",
      "/srv",
    ]
  ) {
    assert.match(mountRefusal(path, RULE)!, /never mounted as a whole/, path);
  }
  for (
    const path of [
      "/srv/data",
      "/opt/venv",
      "/tmp/x",
      "/root/servers",
      "/var/lib/app",
    ]
  ) {
    assert.equal(mountRefusal(path, RULE), null, path);
  }
});

Deno.test("mountRefusal() refuses anything under /proc, /sys, /dev, /etc, /run, /boot", () => {
  for (
    const path of [
      "/proc/1/environ",
      "/sys/kernel",
      "/dev/sda",
      "/etc",
      "/etc/shadow",
      "/run/user/0",
      "/boot/vmlinuz",
      "/var/run/docker.sock",
    ]
  ) {
    assert.match(
      mountRefusal(path, RULE)!,
      /is under "\/\w+(\/run)?", never mounted/,
      path,
    );
  }
});

Deno.test("mountRefusal() refuses homes, what holds the home, credential stores and host files", () => {
  assert.match(mountRefusal("/home/bob", RULE)!, /a home folder/);
  assert.match(mountRefusal("/home/ann", RULE)!, /home folder/);
  assert.match(mountRefusal("/data", { home: "/data/users/ann" })!, /holds it/);
  for (
    const path of [
      "/home/ann/.ssh",
      "/home/ann/.aws/credentials",
      "/root/.config/gh/hosts.yml",
      "/srv/x/.npmrc",
    ]
  ) {
    assert.match(mountRefusal(path, RULE)!, /credential store/, path);
  }
  assert.equal(mountRefusal("/home/ann/.config/app", RULE), null);
  // A name is a whole segment, not a part of one.
  for (const path of ["/srv/.sshd", "/srv/x.ssh", "/srv/.config/ghost"]) {
    assert.equal(mountRefusal(path, RULE), null, path);
  }
  assert.match(
    mountRefusal("/srv/app/skillbox.jsonc", RULE)!,
    /host's own files/,
  );
  assert.match(
    mountRefusal("/srv/app/.skillbox/runs.db", RULE)!,
    /host's own files/,
  );
  // Holding one is allowed: the confinement hides it.
  assert.equal(mountRefusal("/srv/app", RULE), null);
  assert.match(mountRefusal("~/data", RULE)!, /not expanded/);
  assert.match(mountRefusal("data", RULE)!, /not an absolute path/);
});

Deno.test("checkMount() checks the path as written and as its real path", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.symlink("/etc", join(dir, "etc"));
    await Deno.symlink("/home", join(dir, "homes"));
    await Deno.mkdir(join(dir, "data"));
    assert.throws(
      () => checkMount(join(dir, "etc"), { by: "args", ...RULE }),
      /Cannot mount ".*\/etc" named in "args": "\/etc" is under "\/etc"/,
    );
    assert.throws(
      () => checkMount(join(dir, "homes"), { by: "read", ...RULE }),
      /"\/home" is never mounted/,
    );
    assert.throws(
      () =>
        checkMount(`${dir}/data/../../../etc/passwd`, { by: "args", ...RULE }),
      /"\/etc\/passwd" is under "\/etc"/,
    );
    assert.throws(
      () => checkMount("../../..", { by: "write", cwd: dir, ...RULE }),
      /"\/" is never mounted/,
    );
    assert.equal(
      checkMount("data", { by: "write", cwd: dir, ...RULE }),
      join(dir, "data"),
    );
    assert.equal(mountable(join(dir, "etc"), RULE), false);
    assert.equal(mountable(join(dir, "data"), RULE), true);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("checkMount() knows the home and the host's files by their real paths too", async () => {
  // HOME often names the home through a link (/home -> /var/home): the
  // home's real path, or what holds it, is still the home.
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(join(dir, "real/ann/.ssh"), { recursive: true });
    await Deno.writeTextFile(join(dir, "real/host.jsonc"), "{}");
    await Deno.symlink(join(dir, "real"), join(dir, "homes"));
    const rule = {
      home: join(dir, "homes/ann"),
      protect: [join(dir, "homes/host.jsonc")],
    };
    assert.throws(
      () => checkMount(join(dir, "real/ann"), { by: "read", ...rule }),
      /is the home folder or holds it/,
    );
    assert.throws(
      () => checkMount(join(dir, "real"), { by: "read", ...rule }),
      /is the home folder or holds it/,
    );
    assert.throws(
      () => checkMount(join(dir, "real/host.jsonc"), { by: "read", ...rule }),
      /one of the host's own files/,
    );
    assert.equal(mountable(join(dir, "real/ann/work"), rule), true);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("checkMount() refuses another user's whole home behind a linked homes folder", async () => {
  // /home -> /var/home: every home under the real folder is a home too,
  // not only the user's own.
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(join(dir, "var/home/other/.ssh"), { recursive: true });
    await Deno.mkdir(join(dir, "var/home/ann"), { recursive: true });
    await Deno.symlink(join(dir, "var/home"), join(dir, "home"));
    const rule = { home: join(dir, "home/ann"), homes: join(dir, "home") };
    assert.throws(
      () => checkMount(join(dir, "var/home/other"), { by: "read", ...rule }),
      /is a home folder, never mounted as a whole/,
    );
    assert.throws(
      () => checkMount(join(dir, "home/other"), { by: "read", ...rule }),
      /is a home folder, never mounted as a whole/,
    );
    assert.equal(mountable(join(dir, "var/home/other/projects"), rule), true);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
