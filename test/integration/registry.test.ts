import { execFile } from "node:child_process";
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { parseProcess } from "@baton/process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Deployment, REPO, startEmbedded } from "../support/deploy.ts";

const run = promisify(execFile);

/**
 * The registry (issue #3 "Registry", spec §4.2, §6 rule 5, §7) through the admin API the CLI uses,
 * and `baton validate` as a user runs it.
 */

interface Api {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: test reads response shapes dynamically
  body: any;
}

function admin(baton: Deployment, token: string) {
  const base = baton.url.replace(/\/mcp$/, "");
  return async (method: string, path: string, body?: unknown): Promise<Api> => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: await response.json() };
  };
}

const FIXTURES = join(REPO, "conformance/fixtures");
const CORE = readdirSync(FIXTURES)
  .filter((n) => n !== "major-incident" && n !== "vendor-check")
  .sort();

function source(folder: string): string {
  return readFileSync(join(folder, "PROCESS.md"), "utf8");
}

describe("registry: import, bind, publish (§7, §6 rule 5)", () => {
  let baton: Deployment;
  let api: ReturnType<typeof admin>;

  beforeAll(async () => {
    baton = await startEmbedded();
    api = admin(baton, await baton.token({ kind: "person", id: "ops@example.com", operator: true }));
  });
  afterAll(async () => {
    await baton?.stop();
  });

  it("publishes all 10 core conformance fixtures, each as version 1 with its content hash (conformance, §6 rule 5)", async () => {
    expect(CORE).toHaveLength(10);
    for (const name of CORE) {
      const folder = join(FIXTURES, name);
      const parsed = parseProcess(source(folder), { folderName: name });
      if (!parsed.ok) throw new Error(`${name} does not parse`);
      const bindings = Object.fromEntries(parsed.process.roles.map((r) => [r, `g-${r}`]));
      const published = await baton.publish(folder, bindings);
      expect(published, name).toEqual({
        name,
        version: 1,
        contentHash: parsed.process.contentHash,
        unchanged: false,
      });
    }
    const agent = await baton.session({ kind: "agent", id: "a_reader" });
    const names: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { items: { name: string }[]; nextCursor: string | null } = await agent.ok(
        "list_processes",
        cursor ? { cursor } : {},
      );
      names.push(...page.items.map((i) => i.name));
      cursor = page.nextCursor;
    } while (cursor);
    expect(names).toEqual(expect.arrayContaining(CORE));
    await agent.close();
  });

  it("publishes major-incident (parallel-1 is always offered) and refuses vendor-check while no evaluator is configured: check-1 is offered only with one (§8; check.md preamble)", async () => {
    const agent = await baton.session({ kind: "agent", id: "a_profiles" });
    expect((await agent.ok("describe")).profiles).toEqual(["parallel-1"]);
    await agent.close();
    const publish = async (name: string) => {
      const imported = await api("POST", "/api/processes", {
        folderName: name,
        source: source(join(FIXTURES, name)),
      });
      expect(imported.status).toBe(200);
      const roles: string[] = imported.body.data.roles;
      await api("PUT", `/api/drafts/${imported.body.data.draftId}/bindings`, {
        bindings: Object.fromEntries(roles.map((r) => [r, r])),
      });
      return api("POST", `/api/drafts/${imported.body.data.draftId}/publish`);
    };
    const incident = await publish("major-incident");
    expect(incident.status).toBe(200);
    expect(incident.body.data).toMatchObject({ name: "major-incident", version: 1 });
    const vendor = await publish("vendor-check");
    expect(vendor.status).toBe(400);
    expect(vendor.body.error.code).toBe("invalid");
    expect(vendor.body.error.issues).toEqual([
      "PROCESS.md: needs the check-1 profile, which this server does not offer (describe.profiles): no evaluator is configured (BATON_CHECK_URL)",
    ]);
  });

  it("import creates a draft that names every role to bind and shows requires (§7)", async () => {
    const imported = await api("POST", "/api/processes", {
      folderName: "expense-approval",
      source: source(join(REPO, "fixtures/expense-approval")),
    });
    expect(imported.body.data).toMatchObject({
      name: "expense-approval",
      roles: ["manager"],
      unbound: ["manager"],
      bindings: {},
      requires: { systems: ["expense-tool"] },
    });
    const draftId = imported.body.data.draftId;
    const unpublishable = await api("POST", `/api/drafts/${draftId}/publish`);
    expect(unpublishable.body.error).toMatchObject({
      code: "invalid",
      issues: [
        "bindings.manager: bind role manager to a group before publishing (baton publish … --bind manager=<group>)",
      ],
    });
    const wrong = await api("PUT", `/api/drafts/${draftId}/bindings`, {
      bindings: { approver: "x", manager: "bad group!" },
    });
    expect(wrong.body.error.issues).toEqual([
      "bindings.approver: expense-approval has no role approver; its roles are manager",
      "bindings.manager: group ids are 1–128 characters of letters, digits and ._:@-",
    ]);
    const bound = await api("PUT", `/api/drafts/${draftId}/bindings`, { bindings: { manager: "managers" } });
    expect(bound.body.data.unbound).toEqual([]);
  });

  it("refuses a folder whose name differs from name, and a file with mistakes, listing every issue with its position (§2.1)", async () => {
    const wrong = await api("POST", "/api/processes", {
      folderName: "wrong-folder",
      source: source(join(REPO, "test/integration/processes/wrong-folder")),
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.issues).toEqual([
      'PROCESS.md:2:7: name: folder name "wrong-folder" differs from name "right-name"',
    ]);
    const broken = await api("POST", "/api/processes", {
      folderName: "broken-sample",
      source: source(join(REPO, "test/integration/processes/broken-sample")),
    });
    expect(broken.body.error.issues).toHaveLength(5);
    expect(broken.body.error.issues[0]).toBe(
      'PROCESS.md:5:11: inputs.amount: unknown type "float"; use string, number, boolean, date, datetime, list, object or person',
    );
  });

  it("identical content and bindings publish nothing new; any change makes the next version; a published version never changes (§6 rule 5)", async () => {
    const folder = join(REPO, "fixtures/supplier-onboarding");
    const org = "org-versions";
    const v1 = await baton.publish(folder, { "finance-approver": "finance" }, org);
    expect(v1).toMatchObject({ version: 1, unchanged: false });
    expect(await baton.publish(folder, { "finance-approver": "finance" }, org)).toEqual({
      ...v1,
      unchanged: true,
    });
    const v2 = await baton.publish(folder, { "finance-approver": "treasury" }, org);
    expect(v2).toMatchObject({ version: 2, contentHash: v1.contentHash, unchanged: false });

    const agent = await baton.session({ kind: "agent", id: "a_versions", org });
    const pinned = await agent.ok("start_run", {
      process: "supplier-onboarding",
      version: 1,
      inputs: { vendorName: "Acme", amount: 1 },
    });
    expect(pinned.run.version).toBe(1);
    const latest = await agent.ok("start_run", {
      process: "supplier-onboarding",
      inputs: { vendorName: "Acme", amount: 1 },
    });
    expect(latest.run.version).toBe(2);
    const missing = await agent.call("start_run", {
      process: "supplier-onboarding",
      version: 9,
      inputs: {},
      requestId: crypto.randomUUID(),
    });
    expect(missing).toMatchObject({ ok: false, error: { code: "not_found" } });
    await agent.close();
  });

  it("publishing needs an operator; another organization's processes are invisible (§4.1, ARCHITECTURE Identity)", async () => {
    const person = admin(baton, await baton.token({ kind: "person", id: "pat@example.com" }));
    const refused = await person("POST", "/api/processes", { folderName: "x", source: "" });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe("forbidden");

    await baton.publish(join(REPO, "fixtures/expense-approval"), { manager: "m" }, "org-private");
    const outsider = await baton.session({ kind: "agent", id: "a_out", org: "org-elsewhere" });
    expect((await outsider.ok("list_processes")).items).toEqual([]);
    const start = await outsider.call("start_run", {
      process: "expense-approval",
      inputs: {},
      requestId: crypto.randomUUID(),
    });
    expect(start).toMatchObject({ ok: false, error: { code: "not_found" } });
    await outsider.close();
  });
});

describe("baton validate (issue #3 deliverable 6)", () => {
  const cliIn = (cwd: string, ...args: string[]) =>
    run(join(REPO, "node_modules/.bin/tsx"), [join(REPO, "services/cli/src/main.ts"), "validate", ...args], {
      cwd,
    }).then(
      (r) => ({ code: 0, stdout: r.stdout }),
      (e: { code: number; stdout: string }) => ({ code: e.code, stdout: e.stdout }),
    );
  const cli = (...args: string[]) => cliIn(REPO, ...args);

  it("prints every issue as path:line:col: message and exits 1", async () => {
    const r = await cli("test/integration/processes/broken-sample");
    expect(r.code).toBe(1);
    expect(r.stdout.trim().split("\n")).toEqual([
      'test/integration/processes/broken-sample/PROCESS.md:5:11: inputs.amount: unknown type "float"; use string, number, boolean, date, datetime, list, object or person',
      'test/integration/processes/broken-sample/PROCESS.md:9:11: steps[0].next: unknown step "aprove"',
      'test/integration/processes/broken-sample/PROCESS.md:11:13: steps[1].person: "finance.approver" is not a valid path; use inputs.<field> or steps.<id>.output.<field>',
      "test/integration/processes/broken-sample/PROCESS.md:13:10: steps[1].due: not a duration; use an integer followed by m, h or d (30m, 4h, 3d)",
      "test/integration/processes/broken-sample/PROCESS.md:14:9: steps[2].id: must match ^[a-z][a-z0-9_-]{0,63}$",
    ]);
  });

  it("exits 0 on valid files and folders, and --json gives machines the same facts", async () => {
    const ok = await cli("fixtures/expense-approval", "conformance/fixtures/blog-publication/PROCESS.md");
    expect(ok.code).toBe(0);
    const json = await cli(
      "--json",
      "test/integration/processes/wrong-folder",
      "fixtures/supplier-onboarding",
    );
    expect(json.code).toBe(1);
    const results = JSON.parse(json.stdout);
    expect(results).toEqual([
      {
        path: "test/integration/processes/wrong-folder/PROCESS.md",
        ok: false,
        issues: [
          { line: 2, col: 7, message: 'name: folder name "wrong-folder" differs from name "right-name"' },
        ],
      },
      expect.objectContaining({
        path: "fixtures/supplier-onboarding/PROCESS.md",
        ok: true,
        name: "supplier-onboarding",
      }),
    ]);
  });

  it('validate . inside a process folder checks the folder\'s own name (§2.1), not "."', async () => {
    const dir = mkdtempSync(join(tmpdir(), "baton-validate-"));
    try {
      const folder = join(dir, "expense-approval");
      mkdirSync(folder);
      copyFileSync(join(REPO, "fixtures/expense-approval/PROCESS.md"), join(folder, "PROCESS.md"));
      const r = await cliIn(folder, ".");
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^PROCESS\.md: ok \(expense-approval, content hash [0-9a-f]{64}\)$/m);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a file that is not UTF-8 is refused at the first bad byte, not read with a replacement character and hashed (§6 rule 5)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "baton-validate-"));
    try {
      const folder = join(dir, "t");
      mkdirSync(folder);
      const latin1 = Buffer.concat([
        Buffer.from("---\nname: t\ndescription: caf"),
        Buffer.from([0xe9]),
        Buffer.from("\nsteps:\n  - id: done\n    finish: ok\n---\n"),
      ]);
      writeFileSync(join(folder, "PROCESS.md"), latin1);
      const r = await cliIn(dir, "t");
      expect(r.code).toBe(1);
      expect(r.stdout.trim()).toBe(
        "t/PROCESS.md:3:17: the file is not UTF-8 text: the byte 0xE9 at offset 28 does not begin a readable character; save the file as UTF-8",
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
