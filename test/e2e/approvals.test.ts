import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import {
  APPROVAL_INPUTS,
  type ApprovalRequest,
  BatonApprovals,
  type BatonApprovalsOptions,
  RunEndedReceiver,
  TIMEOUT_REASON,
} from "@baton/approval";
import type { McpSession } from "@baton/conformance/mcp";
import { allWork } from "@baton/conformance/walk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Deployment, REPO, startEmbedded } from "../support/deploy.ts";
import { until } from "../support/processes.ts";

/**
 * Issue #17's "Done when", against `baton dev` with a real MCP client (`@baton/approval`) and a real
 * webhook receiver: `baton approvals enable` publishes `tool-approval-high` and `tool-approval-critical`;
 * a test runtime asks for approval of a critical call and the security group's person sees it in
 * `get_work` and approves it (the client answers `approved`); a denial answers `denied` (woken by the
 * signed `run.ended` webhook); a request that outlives its time-out answers `denied` and leaves the run
 * cancelled; asking again with the same request id after a restart answers the recorded decision
 * without a second work item (§4: the request's id is the `requestId` of `start_run`).
 */

const run = promisify(execFile);
const CLI = join(REPO, "services/cli/src/main.ts");
const CRITICAL = "tool-approval-critical";

// biome-ignore lint/suspicious/noExplicitAny: tests read reply shapes dynamically
type Data = any;

describe("approvals — baton dev, @baton/approval and a webhook receiver (issue #17)", () => {
  let baton: Deployment;
  let security: McpSession;
  let reviewer: McpSession;
  let agentToken: string;
  let operatorToken: string;
  let published: string[];
  const clients: BatonApprovals[] = [];

  /** `baton <args>`; with `dataDir`, against this deployment (its URL and dev issuer). */
  const cli = async (args: string[], dataDir = true) =>
    (
      await run(
        process.execPath,
        ["--import", "tsx", CLI, ...args, ...(dataDir ? ["--data-dir", baton.dataDir] : [])],
        {
          cwd: REPO,
        },
      )
    ).stdout;

  /** A new client, as a runtime makes one at start: its own MCP connections, polling fast. */
  const approvals = (options: Partial<BatonApprovalsOptions> = {}) => {
    const client = new BatonApprovals({
      url: baton.url,
      agentToken,
      operatorToken,
      poll: { firstMs: 50, maxMs: 500 },
      ...options,
    });
    clients.push(client);
    return client;
  };

  /** A critical request from the test runtime, with a fresh id and tool name. */
  const criticalCall = (): ApprovalRequest => ({
    id: `approval-${randomUUID()}`,
    toolName: `payments.transfer.${randomUUID().slice(0, 8)}`,
    arguments: { to: "DE89 3704 0044 0532 0130 00", amount: 12_000, apiKey: "sk-live-0123456789" },
    riskTier: "critical",
    agentId: "a_treasurer",
    callerRunId: "session-17",
    context: "Paying the landlord, as the user asked.",
  });

  /** The runs of `tool-approval-critical` started for `req` (found by its tool name, `list_runs`). */
  const runsOf = async (req: ApprovalRequest): Promise<Data[]> =>
    (await security.ok("list_runs", { process: CRITICAL, inputs: { toolName: req.toolName } })).items;

  /** The security person's `get_work` entries for `req`'s runs. */
  const entriesFor = async (req: ApprovalRequest): Promise<Data[]> => {
    const runs = new Set((await runsOf(req)).map((r) => r.id));
    return (await allWork(security, CRITICAL)).filter((e) => runs.has(e.runId));
  };

  /** Waits until the security group's inbox lists `req`'s work item, and returns that entry. */
  const inboxEntry = async (req: ApprovalRequest): Promise<Data> => {
    await until(async () => (await entriesFor(req)).length > 0, `the work item of ${req.id}`, 60_000, 100);
    const entries = await entriesFor(req);
    expect(entries).toHaveLength(1);
    return entries[0];
  };

  /** The person decides the work item: `completed` with the chosen route and a reason (§3.2, §3.4). */
  const decide = (entry: Data, next: string, reason: string) =>
    security.ok("decide", { ...entry.workItem.decide.arguments, decision: "completed", next, reason });

  beforeAll(async () => {
    baton = await startEmbedded();
    const out = await cli([
      "approvals",
      "enable",
      "--tier",
      "high=reviewers",
      "--tier",
      "critical=security",
      "--due",
      "15m",
    ]);
    published = out.trim().split("\n");
    agentToken = await baton.token({ kind: "agent", id: "a_runtime" });
    operatorToken = await baton.token({ kind: "person", id: "ops@example.com", operator: true });
    security = await baton.session({ kind: "person", id: "sec@example.com", groups: ["security"] });
    reviewer = await baton.session({ kind: "person", id: "rev@example.com", groups: ["reviewers"] });
  }, 240_000);

  afterAll(async () => {
    await Promise.all([...clients.map((c) => c.close()), security?.close(), reviewer?.close()]);
    await baton?.stop();
  });

  it("baton approvals enable publishes one process per tier, each the text baton validate accepts (§2, §7)", async () => {
    expect(published).toEqual([
      expect.stringMatching(/^tool-approval-high 1 [0-9a-f]{64}$/),
      expect.stringMatching(/^tool-approval-critical 1 [0-9a-f]{64}$/),
    ]);
    const hash = (published[1] as string).split(" ")[2];
    // `show` prints what `enable` published: validated as a folder of its name, the same content hash.
    const dir = mkdtempSync(join(tmpdir(), "approvals-"));
    try {
      mkdirSync(join(dir, CRITICAL));
      writeFileSync(
        join(dir, CRITICAL, "PROCESS.md"),
        await cli(["approvals", "show", "critical", "--due", "15m"], false),
      );
      expect((await cli(["validate", join(dir, CRITICAL)], false)).trim()).toBe(
        `${join(dir, CRITICAL, "PROCESS.md")}: ok (${CRITICAL}, content hash ${hash})`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const catalog = await security.ok("list_processes");
    const critical = catalog.items.find((p: Data) => p.name === CRITICAL);
    expect(Object.keys(critical.inputs).sort()).toEqual(Object.keys(APPROVAL_INPUTS).sort());
    expect(catalog.items.map((p: Data) => p.name)).toContain("tool-approval-high");
  });

  it("a critical call: the security group's person sees it in get_work, approves, and the client returns approved (§3.4)", async () => {
    const req = criticalCall();
    const asked = approvals().ask(req, { timeoutMs: 120_000 });
    const entry = await inboxEntry(req);
    expect(entry.workItem).toMatchObject({
      stepId: "review",
      kind: "task",
      assignedTo: { group: "security" },
      // A task with nothing to submit but the route and a reason (§3.2).
      output: {},
      evidence: [],
      next: [
        { to: "approved", when: expect.any(String) },
        { to: "denied", when: expect.any(String) },
        { to: "skipped", when: expect.any(String) },
      ],
      due: expect.stringMatching(/Z$/),
      decide: { decisions: ["completed", "failed"] },
    });
    // The person reads the call in the run's inputs: the digest and a preview, never the secret.
    const view = await security.ok("get_run", { runId: entry.runId });
    expect(view.data.inputs).toMatchObject({
      toolName: req.toolName,
      riskTier: "critical",
      agentId: "a_treasurer",
      callerRunId: "session-17",
      argumentsDigest: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(JSON.parse(view.data.inputs.argumentsPreview)).toMatchObject({
      amount: 12_000,
      apiKey: "[redacted]",
    });
    expect(JSON.stringify(view)).not.toContain("sk-live-0123456789");
    // Only the bound group sees it: the high tier's reviewers do not.
    expect((await allWork(reviewer)).filter((e) => e.runId === entry.runId)).toEqual([]);

    await decide(entry, "approved", "The landlord's account matches the lease.");
    expect(await asked).toEqual({
      decision: "approved",
      runId: entry.runId,
      state: "ended",
      outcome: "approved",
      by: "sec@example.com",
      reason: "The landlord's account matches the lease.",
      timedOut: false,
    });
  });

  it("a denial returns denied and a skip skipped, each woken by the signed run.ended webhook", async () => {
    // The runtime's receiver; its secret is the one `baton webhook add` prints for the subscription.
    let receiver: RunEndedReceiver | null = null;
    const server: Server = createServer((req, res) =>
      receiver ? receiver.listener(req, res) : void res.writeHead(503).end(),
    );
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const port = (server.address() as AddressInfo).port;
      const added = JSON.parse(
        await cli([
          "webhook",
          "add",
          `http://127.0.0.1:${port}/approvals`,
          "--events",
          "run.ended",
          "--json",
        ]),
      ) as { secret: string };
      const wakes = new RunEndedReceiver(added.secret);
      receiver = wakes;
      // The safety-net poll is ten minutes away. The client reads the run once right after start_run,
      // in the same call, while the test needs three calls more (list_runs, get_work, decide) before
      // anyone decides; so the answer within the test comes from the webhook waking the request.
      const client = approvals({ receiver: wakes, poll: { withReceiverMs: 600_000 } });
      for (const next of ["denied", "skipped"] as const) {
        const req = criticalCall();
        const asked = client.ask(req, { timeoutMs: 600_000 });
        const entry = await inboxEntry(req);
        await decide(entry, next, `Decided ${next} by the test.`);
        expect(await asked).toMatchObject({
          decision: next,
          runId: entry.runId,
          outcome: next,
          reason: `Decided ${next} by the test.`,
          timedOut: false,
        });
        await until(() => wakes.endedRun(entry.runId) !== undefined, "the verified run.ended");
        expect(wakes.endedRun(entry.runId)).toEqual({
          runId: entry.runId,
          process: CRITICAL,
          state: "ended",
          outcome: next,
        });
      }
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it("a request that outlives its time-out returns denied and leaves the run cancelled (§3.5)", async () => {
    const req = criticalCall();
    const answer = await approvals().ask(req, { timeoutMs: 2_000 });
    expect(answer).toMatchObject({ decision: "denied", state: "cancelled", outcome: null, timedOut: true });
    const view = await security.ok("get_run", { runId: answer.runId });
    expect(view.run).toMatchObject({
      state: "cancelled",
      ended: { by: "ops@example.com", note: TIMEOUT_REASON },
    });
    expect(view.workItems).toEqual([]);
    expect(await entriesFor(req)).toEqual([]);
    // Asked again (a restart), the same id reads the cancelled run: still denied, nothing new.
    expect(await approvals().request(req, { timeoutMs: 60_000 })).toBe("denied");
    expect(await runsOf(req)).toHaveLength(1);
  });

  it("docs/approvals.md: its TypeScript and Python examples, run as written, print approved once the security person approves", async () => {
    const doc = readFileSync(join(REPO, "docs/approvals.md"), "utf8");
    // The walk's enable is the one this deployment was set up with.
    expect(doc).toContain(
      "pnpm baton approvals enable --tier high=reviewers --tier critical=security --due 15m",
    );
    const block = (lang: string, containing: string) => {
      const found = [...doc.matchAll(new RegExp(`\`\`\`${lang}\n([\\s\\S]*?)\`\`\``, "g"))]
        .map((m) => m[1] as string)
        .find((b) => b.includes(containing));
      if (!found) throw new Error(`docs/approvals.md has no ${lang} block with ${containing}`);
      return found;
    };
    const env = { ...process.env, MCP: baton.url, AGENT_TOKEN: agentToken, OPERATOR_TOKEN: operatorToken };
    const examples: [string, () => Promise<{ stdout: string }>][] = [
      [
        "TypeScript",
        () =>
          run(
            process.execPath,
            ["--import", "tsx", "--input-type=module", "-e", block("ts", "approvals.request(")],
            {
              cwd: REPO,
              env: { ...env, REQUEST_ID: `doc-ts-${randomUUID()}` },
            },
          ),
      ],
      [
        "Python",
        () =>
          run("python3", ["-c", block("python", "def request_approval")], {
            cwd: REPO,
            env: { ...env, REQUEST_ID: `doc-py-${randomUUID()}` },
          }),
      ],
    ];
    for (const [language, start] of examples) {
      const running = start();
      const asked = { toolName: "payments.transfer", riskTier: "critical" } as ApprovalRequest;
      const waiting = async () =>
        (await entriesFor(asked)).find((e) => e.workItem.stepId === "review") as Data | undefined;
      await until(
        async () => (await waiting()) !== undefined,
        `the ${language} example's work item`,
        60_000,
        100,
      );
      const entry = (await waiting()) as Data;
      const view = await security.ok("get_run", { runId: entry.runId });
      expect(JSON.parse(view.data.inputs.argumentsPreview), language).toMatchObject({ apiKey: "[redacted]" });
      await decide(entry, "approved", `The ${language} example's call may run.`);
      expect((await running).stdout.trim(), language).toBe("approved");
    }
  });

  it("asking again with the same request id after a restart returns the recorded decision without a second work item (§4)", async () => {
    const req = criticalCall();
    // The runtime asks, then goes away while waiting (its process stops): nothing is cancelled.
    const gone = new AbortController();
    const first = approvals().ask(req, { timeoutMs: 600_000, signal: gone.signal });
    const entry = await inboxEntry(req);
    gone.abort();
    await expect(first).rejects.toThrow(/abort/i);
    expect((await security.ok("get_run", { runId: entry.runId })).run.state).toBe("waiting");

    // Restarted, with a new client and a new token for the same agent, it asks again with the same id:
    // the same run, still one work item.
    agentToken = await baton.token({ kind: "agent", id: "a_runtime" });
    const again = approvals().ask(req, { timeoutMs: 600_000 });
    await until(async () => (await entriesFor(req)).length === 1, "the one work item");
    expect(await runsOf(req)).toHaveLength(1);
    expect((await entriesFor(req))[0].workItem.id).toBe(entry.workItem.id);
    await decide(entry, "approved", "Approved once.");
    expect(await again).toMatchObject({ decision: "approved", runId: entry.runId, timedOut: false });

    // Asked again after the decision: the recorded decision at once, no new run, no work item.
    expect(await approvals().request(req, { timeoutMs: 60_000 })).toBe("approved");
    expect(await runsOf(req)).toHaveLength(1);
    expect(await entriesFor(req)).toEqual([]);

    // With no time left, the time-out's cancel finds the run ended (run_ended): the recorded decision.
    expect(await approvals().ask(req, { timeoutMs: 0 })).toMatchObject({
      decision: "approved",
      state: "ended",
      outcome: "approved",
      by: "sec@example.com",
      timedOut: true,
    });
    expect((await security.ok("get_run", { runId: entry.runId })).run.state).toBe("ended");
  });
});
