import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { tokensTemplate } from "@baton/conformance/runner/options";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { validateXML } from "xmllint-wasm";
import { devToken } from "../../services/cli/src/token.ts";
import { runConformanceCli } from "../support/conformance-cli.ts";
import { type Deployment, freePort, REPO, startDistributed, startEmbedded } from "../support/deploy.ts";
import { startFaultProxy } from "../support/fault-proxy.ts";

/**
 * `baton conformance` as a user runs it (issue #18): a child process against `baton dev --clock
 * manual` and against the services on NATS and PostgreSQL sharing a manual clock, on a subset of the
 * checks (`--only`; docs/conformance-runner.md has the full runs): untimed and timed checks pass, the
 * check profile's scripted-evaluator checks are skipped with the reason, the JUnit report validates
 * against `libs/conformance/junit.xsd`, `--json` is the report. Then what makes it exit 2.
 */

/** A few checks of each kind: discovery, a replay, paging, decide's order, a lease (timed), a check-profile scenario (skipped). */
const SUBSET = "R2-discovery|R2-5 #13 #50|#98 #99|decide.order|R2-6 #41|vendor-check, pass";
const XSD = readFileSync(join(REPO, "libs/conformance/junit.xsd"), "utf8");
const tmp = () => mkdtempSync(join(tmpdir(), "baton-conformance-cli-"));

async function junitProblems(xml: string): Promise<string[]> {
  const result = await validateXML({
    xml: [{ fileName: "report.xml", contents: xml }],
    schema: [{ fileName: "junit.xsd", contents: XSD }],
  });
  return result.errors.map((e) => e.message);
}

/** A tokens file for the template's identities, minted by `baton`'s dev issuer for its MCP endpoint. */
async function mintedTokens(baton: Deployment): Promise<string> {
  const t = tokensTemplate();
  const mint = (
    sub: string,
    kind: "agent" | "person",
    groups: string[] = [],
    roles: string[] = [],
    org = "default",
  ) => devToken(baton.dataDir, { sub, org, kind, groups, roles }, baton.url);
  for (const a of t.agents) a.token = await mint(a.id, "agent");
  for (const [g, members] of Object.entries(t.groups))
    for (const m of members) m.token = await mint(m.id, "person", [g]);
  t.outsider.token = await mint(t.outsider.id, "person");
  for (const p of t.people ?? []) p.token = await mint(p.id, "person");
  t.operator.token = await mint(t.operator.id, "person", [], ["operator"]);
  t.otherOrg.token = await mint(t.otherOrg.id, "agent", [], [], "other-org");
  const file = join(tmp(), "tokens.json");
  writeFileSync(file, JSON.stringify(t));
  return file;
}

function expectSubsetPassed(stdout: string) {
  expect(stdout).toMatch(/^PASS {2}conformance › tools\.md describe and list_processes › \[R2-discovery/m);
  expect(stdout).toMatch(/^PASS {2}timed conformance › .*\[R2-6 #41 /m);
  expect(stdout).toMatch(/^SKIP {2}conformance › check profile.* vendor-check, pass/m);
  expect(stdout).toMatch(/^ {6}reason: scripts the check profile's evaluator/m);
  expect(stdout).toMatch(/: 6 checks, 5 passed, 0 failed, 1 skipped$/m);
}

describe.each([
  ["embedded (baton dev --clock manual)", () => startEmbedded({ clock: "manual" })],
  ["distributed (baton serve, shared manual clock)", () => startDistributed({ clock: "manual" })],
] as const)("baton conformance — %s", (_label, start) => {
  let baton: Deployment;
  beforeAll(async () => {
    baton = await start();
  }, 240_000);
  afterAll(() => baton?.stop(), 120_000);

  it("--data-dir --clock baton --junit: every selected check passes but the scripted-evaluator one, skipped with its reason; the JUnit report validates against junit.xsd (exit 0)", async () => {
    const junit = join(tmp(), "report.xml");
    const run = await runConformanceCli([
      "--url",
      baton.url,
      "--data-dir",
      baton.dataDir,
      "--clock",
      "baton",
      "--only",
      SUBSET,
      "--junit",
      junit,
    ]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expectSubsetPassed(run.stdout);
    const xml = readFileSync(junit, "utf8");
    expect(await junitProblems(xml)).toEqual([]);
    expect(xml).toContain(
      '<testsuites name="baton conformance" tests="6" failures="0" errors="0" skipped="1"',
    );
  });

  it("--tokens: the identities of the file, ids translated per check; what the file cannot give is skipped with the reason, nothing fails (exit 0)", async () => {
    const run = await runConformanceCli([
      "--url",
      baton.url,
      "--tokens",
      await mintedTokens(baton),
      "--clock",
      "baton",
      "--only",
      SUBSET,
    ]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^PASS {2}conformance › .*\[decide\.order /m);
    expect(run.stdout).toMatch(/^PASS {2}conformance › .*\[R2-5 #13 #50 /m);
    expect(run.stdout).toMatch(
      /^SKIP {2}conformance › .*\[#98 #99 .*\n {6}reason: publishes into an organization of its own/m,
    );
    expect(run.stdout).toMatch(/: 6 checks, \d passed, 0 failed, \d skipped$/m);
  });
});

describe("baton conformance — output, skips and exit 2", () => {
  let baton: Deployment;
  beforeAll(async () => {
    baton = await startEmbedded({ clock: "manual" });
  }, 240_000);
  afterAll(() => baton?.stop(), 120_000);

  it("--json prints the report: every check with its tags, spec sections and state, and the summary", async () => {
    const run = await runConformanceCli([
      "--url",
      baton.url,
      "--data-dir",
      baton.dataDir,
      "--json",
      "--only",
      "decide.order",
    ]);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.summary).toEqual({ total: 1, passed: 1, failed: 0, skipped: 0 });
    expect(report.checks[0]).toMatchObject({
      state: "passed",
      tags: expect.arrayContaining(["decide.order", "decide.conflict:run_ended"]),
      spec: "tools.md decide; issue #4 deliver 1",
      group: "conformance › §3.4 people: work items, snapshots and decide",
    });
  });

  it("without --clock the timed checks are skipped with the reason, never passed", async () => {
    const run = await runConformanceCli([
      "--url",
      baton.url,
      "--data-dir",
      baton.dataDir,
      "--only",
      "R2-6 #41",
    ]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^SKIP {2}timed conformance › /m);
    expect(run.stdout).toMatch(/reason: moves time: needs the server's manual clock/);
    expect(run.stdout).toMatch(/1 checks, 0 passed, 0 failed, 1 skipped$/m);
  });

  it("exit 2: bad arguments, a tokens file still holding the template's placeholders, nothing listening", async () => {
    const bad = await runConformanceCli(["--url", baton.url]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--tokens FILE/);
    const template = join(tmp(), "tokens.json");
    writeFileSync(template, JSON.stringify(tokensTemplate()));
    const placeholders = await runConformanceCli(["--url", baton.url, "--tokens", template]);
    expect(placeholders.code).toBe(2);
    expect(placeholders.stderr).toMatch(/operator\.token is still the template's placeholder/);
    const port = await freePort();
    const nobody = await runConformanceCli([
      "--url",
      `http://127.0.0.1:${port}/mcp`,
      "--data-dir",
      baton.dataDir,
    ]);
    expect(nobody.code).toBe(2);
    expect(nobody.stderr).toMatch(/cannot reach an MCP server at/);
  });

  it("exit 2 against a server that is not Baton and lacks the fixtures: each missing process named with its folder and how its roles bind; --clock baton refused there", async () => {
    // A fresh baton dev publishes only its samples; behind a proxy it calls itself something else.
    const fresh = await startEmbedded();
    const proxy = await startFaultProxy(fresh.url);
    proxy.fault = { name: "another server", serverName: "other-server", rewrite: () => undefined };
    try {
      const file = await mintedTokens(fresh);
      const run = await runConformanceCli(["--url", proxy.url, "--tokens", file]);
      expect(run.code, run.stdout + run.stderr).toBe(2);
      expect(run.stderr).toMatch(/the server lacks \d+ of the processes the scenarios run on/);
      expect(run.stderr).toMatch(/^ {2}expense-reimbursement: not listed by list_processes$/m);
      expect(run.stderr).toMatch(/folder .*conformance\/fixtures\/expense-reimbursement/);
      expect(run.stderr).toMatch(/^ {4}roles accounts-payable → accounts-payable$/m);
      const clock = await runConformanceCli(["--url", proxy.url, "--tokens", file, "--clock", "baton"]);
      expect(clock.code).toBe(2);
      expect(clock.stderr).toMatch(/--clock baton moves Baton's manual clock/);
    } finally {
      await proxy.stop();
      await fresh.stop();
    }
  });
});
