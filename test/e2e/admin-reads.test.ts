import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { McpSession } from "@baton/conformance/mcp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type As, DEPLOYMENTS, type Deployment, REPO } from "../support/deploy.ts";

const EXPENSE = join(REPO, "fixtures/expense-approval");

/**
 * The admin API's read endpoints (issue #16): every published version of a process with its content
 * hash and bindings, one version with its source, and a run's journal — readable by anyone in the
 * organization (agents and people without the operator role too), and by nobody else: another
 * organization's process or run answers exactly as one that does not exist.
 */
describe.each(DEPLOYMENTS)("admin API reads (issue #16) — %s", (_label, start) => {
  let baton: Deployment;
  let base: string;
  let agent: McpSession;
  let person: McpSession;
  let runId: string;
  let claimToken: string;
  let fileId: string;

  const get = async (path: string, bearer?: string) => {
    const response = await fetch(`${base}${path}`, {
      headers: bearer ? { authorization: `Bearer ${bearer}` } : {},
    });
    // biome-ignore lint/suspicious/noExplicitAny: tests read response shapes dynamically
    return { status: response.status, body: (await response.json()) as Record<string, any> };
  };

  beforeAll(async () => {
    baton = await start();
    base = baton.url.replace(/\/mcp$/, "");
    await baton.publish(EXPENSE, { manager: "manager" });
    await baton.publish(EXPENSE, { manager: "other-managers" }, "other");
    agent = await baton.session({ kind: "agent", id: "a_reads" });
    person = await baton.session({ kind: "person", id: "pat@example.com", groups: ["manager"] });
    const started = await person.ok("start_run", {
      process: "expense-approval",
      inputs: { employee: "sam@example.com", amount: 10, receiptUrl: "https://example.com/r/9" },
    });
    runId = started.run.id;
    const claim = await agent.ok("claim", { runId, stepId: "check_claim" });
    claimToken = claim.token;
    const upload = await agent.ok("upload", {
      fileName: "receipt.txt",
      contentType: "text/plain",
      contentBase64: Buffer.from("receipt bytes\n").toString("base64"),
    });
    fileId = upload.id;
    await agent.ok("submit", {
      token: claimToken,
      output: { matches: true, category: "meals" },
      evidence: [
        { kind: "file", ref: fileId },
        { kind: "link", ref: "https://example.com/r/9" },
      ],
      summary: "Checked.",
      next: "approve",
      reason: "It matches.",
    });
  });
  afterAll(async () => {
    await agent?.close();
    await person?.close();
    await baton?.stop();
  });

  it("lists every version with content hash and bindings, and one version with its source, for an agent and a person", async () => {
    const readers: As[] = [
      { kind: "agent", id: "a_reads" },
      { kind: "person", id: "pat@example.com", groups: [] },
    ];
    for (const as of readers) {
      const bearer = await baton.token(as);
      const list = await get("/api/processes/expense-approval/versions", bearer);
      expect(list.status).toBe(200);
      expect(list.body.ok).toBe(true);
      const latest = list.body.data.versions[0];
      expect(list.body.data.name).toBe("expense-approval");
      expect(latest).toMatchObject({ name: "expense-approval", bindings: { manager: "manager" } });
      expect(latest.contentHash).toMatch(/^[0-9a-f]{64}$/);
      expect(Date.parse(latest.publishedAt)).not.toBeNaN();
      const one = await get(`/api/processes/expense-approval/versions/${latest.version}`, bearer);
      expect(one.status).toBe(200);
      expect(one.body.data).toMatchObject({
        ...latest,
        source: readFileSync(join(EXPENSE, "PROCESS.md"), "utf8"),
      });
      expect(one.body.data.definition.steps.map((s: { id: string }) => s.id)).toEqual([
        "check_claim",
        "approve",
        "return_to_employee",
        "approved",
        "returned",
      ]);
      expect(one.body.data.definition.contentHash).toBe(latest.contentHash);
    }
  });

  it("a run's journal: who, what, when, against which version and content hash, file evidence with a working url, no token", async () => {
    const bearer = await baton.token({ kind: "agent", id: "someone-else" });
    const versions = await get("/api/processes/expense-approval/versions", bearer);
    const { contentHash, version } = versions.body.data.versions[0];
    const journal = await get(`/api/runs/${runId}/journal`, bearer);
    expect(journal.status).toBe(200);
    const page = journal.body.data;
    expect(page.runId).toBe(runId);
    expect(page.nextAfter).toBeNull();
    expect(
      page.entries.map((e: { command: string; actor: string; rev: number }) => [e.rev, e.command, e.actor]),
    ).toEqual([
      [1, "start_run", "pat@example.com"],
      [2, "claim", "a_reads"],
      [3, "submit", "a_reads"],
    ]);
    for (const e of page.entries) {
      expect(e).toMatchObject({ process: "expense-approval", version, contentHash });
      expect(Date.parse(e.at)).not.toBeNaN();
    }
    const evidence = page.entries[2].detail.args.evidence;
    expect(evidence[1]).toEqual({ kind: "link", ref: "https://example.com/r/9" });
    expect(evidence[0]).toMatchObject({ kind: "file", ref: fileId });
    const bytes = await fetch(evidence[0].url);
    expect(bytes.status).toBe(200);
    expect(await bytes.text()).toBe("receipt bytes\n");
    expect(JSON.stringify(page)).not.toContain(claimToken);

    const first = await get(`/api/runs/${runId}/journal?limit=2`, bearer);
    expect(first.body.data.entries.map((e: { rev: number }) => e.rev)).toEqual([1, 2]);
    expect(first.body.data.nextAfter).toBe(2);
    const rest = await get(`/api/runs/${runId}/journal?after=2&limit=2`, bearer);
    expect(rest.body.data.entries.map((e: { rev: number }) => e.rev)).toEqual([3]);
    expect(rest.body.data.nextAfter).toBeNull();
  });

  it("another organization reads its own versions only, and another organization's run is not_found like a missing one", async () => {
    const outsider = await baton.token({
      kind: "person",
      id: "eve@example.com",
      operator: true,
      org: "other",
    });
    const theirs = await get("/api/processes/expense-approval/versions", outsider);
    expect(theirs.status).toBe(200);
    expect(theirs.body.data.versions.map((v: { bindings: unknown }) => v.bindings)).toEqual([
      { manager: "other-managers" },
    ]);
    const foreignRun = await get(`/api/runs/${runId}/journal`, outsider);
    const noRun = await get("/api/runs/r_aaaaaaaaaaaaaaaaaaaaaaaaaa/journal", outsider);
    expect(foreignRun.status).toBe(404);
    expect(foreignRun.body).toEqual({
      ok: false,
      error: { code: "not_found", message: `no run ${runId} in your organization` },
    });
    expect(noRun.body.error.code).toBe("not_found");
    const stranger = await baton.token({ kind: "agent", id: "a_x", org: "third" });
    const none = await get("/api/processes/expense-approval/versions", stranger);
    expect(none.status).toBe(404);
    expect(none.body.error).toEqual({
      code: "not_found",
      message: "no process expense-approval in your organization",
    });
    const version = await get("/api/processes/expense-approval/versions/1", stranger);
    expect(version.status).toBe(404);
  });

  it("the gateway serves the web console at /ui/ with its Content-Security-Policy", async () => {
    const ui = await fetch(`${base}/ui/`);
    expect(ui.status).toBe(200);
    expect(ui.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(await ui.text()).toContain('<div id="app">');
  });

  it("refuses a missing token with 401 and bad parameters with invalid and every issue", async () => {
    const anonymous = await fetch(`${base}/api/runs/${runId}/journal`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("www-authenticate")).toContain("resource_metadata=");
    const bearer = await baton.token({ kind: "agent", id: "a_reads" });
    const bad = await get(`/api/runs/${runId}/journal?after=-1&limit=9999`, bearer);
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("invalid");
    expect(bad.body.error.issues).toHaveLength(2);
    expect(bad.body.error.issues.join("\n")).toMatch(/after/);
    expect(bad.body.error.issues.join("\n")).toMatch(/limit/);
    const word = await get("/api/processes/expense-approval/versions/latest", bearer);
    expect(word.status).toBe(400);
    expect(word.body.error.issues[0]).toMatch(/^version: /);
  });
});
