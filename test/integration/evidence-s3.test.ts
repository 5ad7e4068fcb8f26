import { createHash, randomUUID } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DeleteObjectCommand } from "@aws-sdk/client-s3";
import { McpSession, type Result } from "@baton/conformance/mcp";
import { fixture, Harness, refused, sameNameBindings, statesOf } from "@baton/conformance/support";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestClock } from "../support/clock.ts";
import {
  type As,
  type Deployment,
  type DistributedDeployment,
  freePort,
  REPO,
  startDistributed,
  startEmbedded,
} from "../support/deploy.ts";
import type { S3Server } from "../support/s3.ts";
import { TcpProxy } from "../support/tcp-proxy.ts";

// biome-ignore lint/suspicious/noExplicitAny: tests read response shapes dynamically
type Data = any;

const b64 = (text: string) => Buffer.from(text).toString("base64");
const sha = (bytes: string | Buffer) => createHash("sha256").update(bytes).digest("hex");
const rid = () => randomUUID();
const SUPPLIER_ONBOARDING = join(REPO, "fixtures/supplier-onboarding");
/** A small upload limit, so "one byte over" is cheap to send. */
const MAX_UPLOAD = 4096;

/** Waits until `url` answers MCP `describe` as `as` (a gateway started after the deployment). */
async function ready(baton: Deployment, url: string): Promise<void> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    try {
      const session = await McpSession.connect(
        url,
        await baton.token({ kind: "agent", id: "ready" }),
        "ready",
      );
      const described = await session.call("describe", {});
      await session.close();
      if (described.ok) return;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`no gateway answered at ${url}:\n${baton.logs()}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

/** Stops one `baton serve` process and waits for it to exit. */
async function stop(child: {
  kill(signal: NodeJS.Signals): boolean;
  once(e: "exit", f: () => void): unknown;
}) {
  await new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

/** Asserts that a file item's url is a presigned GET of its object that opens its bytes under its name. */
async function opensFromBucket(s3: S3Server, item: Data, bytes: string, fileName: string): Promise<void> {
  expect(item.sha256).toBe(sha(bytes));
  const url = new URL(item.url);
  expect(`${url.origin}${url.pathname}`).toBe(`${s3.endpoint}/${s3.bucket}/default/${item.sha256}`);
  expect(Number(url.searchParams.get("X-Amz-Expires"))).toBe(900);
  const response = await fetch(item.url);
  expect(response.status).toBe(200);
  expect(await response.text()).toBe(bytes);
  expect(response.headers.get("content-disposition")).toBe(
    `attachment; filename="${fileName}"; filename*=UTF-8''${encodeURIComponent(fileName)}`,
  );
}

/**
 * Issue #10 on the distributed deployment: every service its own `baton serve` process over NATS and
 * PostgreSQL, file bytes in a bucket of an S3-compatible server the test starts (s3rver), two
 * gateways and two evidence replicas, and no directory shared by any of them (no `BATON_BLOB_DIR`).
 */
describe("evidence on S3: two gateways, two evidence replicas, no shared directory (issue #10, §5)", () => {
  let baton: DistributedDeployment;
  let s3: S3Server;
  let db: pg.Client;
  let urlB: string;
  const h = new Harness(async () => baton);
  const sessions: McpSession[] = [];

  /** A session of `who` on gateway A (the deployment's) or B (the second replica). */
  async function on(gateway: "A" | "B", who: As): Promise<McpSession> {
    const url = gateway === "A" ? baton.url : urlB;
    const session = await McpSession.connect(url, await baton.token(who), `${gateway}:${who.id}`);
    sessions.push(session);
    return session;
  }
  const upload = (session: McpSession, text: string, fileName: string): Promise<Data> =>
    session.ok("upload", { fileName, contentType: "text/plain", contentBase64: b64(text), requestId: rid() });

  beforeAll(async () => {
    baton = await startDistributed({ env: { BATON_MAX_UPLOAD_BYTES: String(MAX_UPLOAD) } });
    s3 = baton.s3 as S3Server;
    const portB = await freePort();
    baton.serve("evidence");
    baton.serve("gateway", { BATON_PORT: String(portB) });
    urlB = `http://127.0.0.1:${portB}/mcp`;
    await ready(baton, urlB);
    await h.setup(
      ["contract-review", "expense-reimbursement", "supplier-rfp"]
        .map((name) => ({ folder: fixture(name), bindings: sameNameBindings(fixture(name)) }))
        .concat([{ folder: SUPPLIER_ONBOARDING, bindings: sameNameBindings(SUPPLIER_ONBOARDING) }]),
    );
    db = new pg.Client({ connectionString: baton.databaseUrl });
    await db.connect();
  }, 240_000);
  afterAll(async () => {
    await Promise.all(sessions.map((s) => s.close()));
    await db?.end();
    await h.teardown();
  }, 120_000);

  it("runs with no blob directory, two gateway and two evidence processes", () => {
    expect(baton.s3).not.toBeNull();
    expect(baton.running("gateway")).toHaveLength(2);
    expect(baton.running("evidence")).toHaveLength(2);
  });

  it("contract-review: uploads through one gateway, decisions through the other, ends signed; the run view's file items carry sha256 and presigned S3 urls that open the bytes", async () => {
    const starter = await on("A", { kind: "person", id: "starter@example.com" });
    const ownerA = await on("A", { kind: "person", id: "owner@example.com" });
    const ownerB = await on("B", { kind: "person", id: "owner@example.com" });
    const legal = await on("B", { kind: "person", id: "lee@example.com", groups: ["legal-reviewer"] });
    const finance = await on("A", { kind: "person", id: "fay@example.com", groups: ["finance-reviewer"] });
    const signerA = await on("A", {
      kind: "person",
      id: "sig@example.com",
      groups: ["authorized-signatory"],
    });
    const signerB = await on("B", {
      kind: "person",
      id: "sig@example.com",
      groups: ["authorized-signatory"],
    });
    const contract = await upload(ownerB, "contract, net 30", "contract.txt");
    const runId = (
      await starter.ok("start_run", {
        process: "contract-review",
        inputs: { contractId: "C-S3", document: "DMS-S3", owner: "owner@example.com" },
        requestId: rid(),
      })
    ).run.id;
    const prepared = await h.decided(ownerA, runId, "prepare", "completed", {
      output: { revision: "r1", summary: "Net 30." },
      evidence: [{ kind: "file", ref: contract.id }],
    });
    await opensFromBucket(s3, prepared.data.steps.prepare.evidence[0], "contract, net 30", "contract.txt");
    await h.decided(legal, runId, "legal_review", "approved");
    await h.decided(finance, runId, "finance_review", "approved");
    const executed = await upload(signerA, "executed contract", "executed.txt");
    const ended = await h.decided(signerB, runId, "sign", "completed", {
      output: { signedRevision: "r1", signedAt: "2026-10-06T12:00:00Z" },
      evidence: [{ kind: "file", ref: executed.id }],
    });
    expect(ended.run).toMatchObject({ state: "ended", outcome: "signed" });
    const view = await legal.ok("get_run", { runId });
    await opensFromBucket(s3, view.data.steps.prepare.evidence[0], "contract, net 30", "contract.txt");
    await opensFromBucket(s3, view.data.steps.sign.evidence[0], "executed contract", "executed.txt");
  });

  it("expense-reimbursement: the receipts file uploaded on A is verified on B, seen by the agent's claim with a url that opens it; ends reimbursed", async () => {
    const employeeA = await on("A", { kind: "person", id: "emp@example.com" });
    const employeeB = await on("B", { kind: "person", id: "emp@example.com" });
    const manager = await on("A", { kind: "person", id: "boss@example.com" });
    const payables = await on("B", { kind: "person", id: "ap@example.com", groups: ["accounts-payable"] });
    const agent = await on("B", { kind: "agent", id: "a_expense" });
    const runId = (
      await employeeB.ok("start_run", {
        process: "expense-reimbursement",
        inputs: { claimId: "EXP-S3", manager: "boss@example.com" },
        requestId: rid(),
      })
    ).run.id;
    const receipt = await upload(employeeA, "taxi 40 USD", "receipts.txt");
    await h.decided(employeeB, runId, "receipts", "completed", {
      output: { purpose: "Trip", totalUsd: 40, lines: [{ merchant: "Taxi Co", amount: 40 }] },
      evidence: [{ kind: "file", ref: receipt.id }],
    });
    const claim = await h.claim(agent, runId, "check");
    await opensFromBucket(s3, claim.data.steps.receipts.evidence[0], "taxi 40 USD", "receipts.txt");
    await agent.ok("submit", {
      token: claim.token,
      output: { checkedTotalUsd: 40, checks: "ok" },
      evidence: [{ kind: "link", ref: "https://expenses.example.com/EXP-S3" }],
      summary: "Checked.",
      requestId: rid(),
    });
    await h.decided(manager, runId, "manager_review", "approved");
    const ended = await h.decided(payables, runId, "reimburse", "completed", {
      output: { paymentReference: "PAY-S3", paidUsd: 40 },
      evidence: [{ kind: "link", ref: "https://erp.example.com/pay/s3" }],
    });
    expect(ended.run).toMatchObject({ state: "ended", outcome: "reimbursed" });
  });

  it("supplier-rfp: three quotes uploaded across both gateways meet evidence: [file]; ends selected with three openable files", async () => {
    const buyerA = await on("A", { kind: "person", id: "buyer@example.com", groups: ["procurement-buyer"] });
    const buyerB = await on("B", { kind: "person", id: "buyer@example.com", groups: ["procurement-buyer"] });
    const manager = await on("B", { kind: "person", id: "pm@example.com", groups: ["procurement-manager"] });
    const agent = await on("A", { kind: "agent", id: "a_sourcing" });
    const runId = (
      await buyerA.ok("start_run", {
        process: "supplier-rfp",
        inputs: {
          rfpId: "RFP-S3",
          requirements: "500 chairs",
          supplierOne: "Acme",
          supplierTwo: "Birch",
          supplierThree: "Cedar",
        },
        requestId: rid(),
      })
    ).run.id;
    const quotes = [
      await upload(buyerA, "quote from Acme", "Acme.txt"),
      await upload(buyerB, "quote from Birch", "Birch.txt"),
      await upload(buyerA, "quote from Cedar", "Cedar.txt"),
    ];
    await h.decided(buyerB, runId, "collect_quotes", "completed", {
      output: { quoteOne: "Q-A1", quoteTwo: "Q-B1", quoteThree: "Q-C1" },
      evidence: quotes.map((q) => ({ kind: "file", ref: q.id })),
    });
    await h.work(agent, runId, "compare", {
      comparison: "Birch.",
      recommendedSupplier: "Birch",
      rationale: "Price.",
    });
    await h.decided(manager, runId, "select", "approved");
    const ended = await h.work(
      agent,
      runId,
      "record_selection",
      { sourcingRecord: "SRC-S3" },
      { evidence: [{ kind: "link", ref: "https://sourcing/s3" }] },
    );
    expect(ended.run).toMatchObject({ state: "ended", outcome: "selected" });
    const items = ended.data.steps.collect_quotes.evidence;
    for (const [i, name] of ["Acme", "Birch", "Cedar"].entries())
      await opensFromBucket(s3, items[i], `quote from ${name}`, `${name}.txt`);
  });

  it("an object altered in the bucket after upload makes the next submission citing it not_accepted, naming the file; a removed one too; a fresh upload of the same bytes repairs it (§5)", async () => {
    const agent = await on("A", { kind: "agent", id: "a_screen" });
    const agentB = await on("B", { kind: "agent", id: "a_screen" });
    const runId = (
      await agent.ok("start_run", {
        process: "supplier-onboarding",
        inputs: { vendorName: "Tampered Ltd", amount: 1000 },
        requestId: rid(),
      })
    ).run.id;
    const report = await upload(agent, "OFAC: clear; EU: clear", "screening.txt");
    const key = `default/${report.sha256}`;
    await s3.overwrite(key, Buffer.from("OFAC: HIT; EU: clear"));
    const claim = await h.claim(agent, runId, "check_vendor");
    const submission = {
      token: claim.token,
      output: { cleared: true, summary: "Clear on both lists." },
      evidence: [{ kind: "file", ref: report.id }],
      summary: "Screened.",
      next: "approve",
      reason: "Cleared.",
    };
    refused(await agentB.call("submit", { ...submission, requestId: rid() }), "not_accepted", [
      `evidence ${report.id}: stored bytes no longer match the SHA-256 recorded at upload`,
      "evidence: file required",
    ]);
    await s3.client.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: key }));
    refused(await agent.call("submit", { ...submission, requestId: rid() }), "not_accepted", [
      `evidence ${report.id}: the stored bytes are gone; upload the file again and cite the new id`,
      "evidence: file required",
    ]);
    // The claim stands; the same bytes uploaded again (a new requestId) put the object back.
    const again = await upload(agentB, "OFAC: clear; EU: clear", "screening-again.txt");
    expect(again.sha256).toBe(report.sha256);
    expect((await s3.read(key))?.toString()).toBe("OFAC: clear; EU: clear");
    const accepted = await agent.ok("submit", { ...submission, requestId: rid() });
    expect(statesOf(accepted)).toMatchObject({ check_vendor: "done", approve: "waiting" });
  });

  it("each evidence replica alone serves uploads and verification: stop one, then start a new one and stop the other", async () => {
    const [first] = baton.running("evidence");
    const agent = await on("B", { kind: "agent", id: "a_replicas" });
    const agentA = await on("A", { kind: "agent", id: "a_replicas" });
    /** Uploads through B and has the file verified through A; an agent retries `retry` with the same requestId. */
    const exercise = async (label: string) => {
      const args = {
        fileName: `${label}.txt`,
        contentType: "text/plain",
        contentBase64: b64(`report ${label}`),
        requestId: rid(),
      };
      const deadline = Date.now() + 90_000;
      let result: Result;
      do result = await agent.call("upload", args);
      while (!result.ok && result.error.code === "retry" && Date.now() < deadline);
      expect(result.ok, JSON.stringify(result)).toBe(true);
      const file = (result as { data: Data }).data;
      const runId = (
        await agentA.ok("start_run", {
          process: "supplier-onboarding",
          inputs: { vendorName: label, amount: 1 },
          requestId: rid(),
        })
      ).run.id;
      const claim = await h.claim(agentA, runId, "check_vendor");
      const view = await agentA.ok("submit", {
        token: claim.token,
        output: { cleared: true, summary: "Clear." },
        evidence: [{ kind: "file", ref: file.id }],
        summary: "Screened.",
        next: "approve",
        reason: "Cleared.",
        requestId: rid(),
      });
      expect(view.data.steps.check_vendor.evidence[0]).toMatchObject({
        ref: file.id,
        sha256: sha(`report ${label}`),
      });
    };
    await stop(first as NonNullable<typeof first>);
    expect(baton.running("evidence")).toHaveLength(1);
    await exercise("second-alone");
    const [second] = baton.running("evidence");
    baton.serve("evidence");
    await stop(second as NonNullable<typeof second>);
    await exercise("third-alone");
  });

  describe("bad input gets a clear error and stores nothing (issue #10, tools.md upload and submit)", () => {
    let proxy: TcpProxy;
    let viaProxy: McpSession;
    let foreign: Data;
    let receiptsItem: Data;
    const snapshot = async () => ({
      keys: await s3.keys(),
      rows: (
        await db.query(
          `select (select count(*) from files)::int as files, (select count(*) from upload_intents)::int as intents,
                  (select count(*) from idempotency)::int as idempotency`,
        )
      ).rows[0],
    });

    beforeAll(async () => {
      // A third gateway reaching the bucket through a proxy the test can cut: a store that is down.
      proxy = await TcpProxy.start({ host: "127.0.0.1", port: s3.port });
      const portC = await freePort();
      baton.serve("gateway", {
        BATON_PORT: String(portC),
        AWS_ENDPOINT_URL_S3: `http://127.0.0.1:${proxy.port}`,
      });
      const urlC = `http://127.0.0.1:${portC}/mcp`;
      await ready(baton, urlC);
      viaProxy = await McpSession.connect(urlC, await baton.token({ kind: "agent", id: "a_bad" }), "C:a_bad");
      sessions.push(viaProxy);
      // Another organization's upload, and a work item whose decision would cite it.
      foreign = await upload(
        await on("A", { kind: "agent", id: "a_other", org: "other-org" }),
        "theirs",
        "theirs.txt",
      );
      const employee = await on("A", { kind: "person", id: "emp-bad@example.com" });
      const runId = (
        await employee.ok("start_run", {
          process: "expense-reimbursement",
          inputs: { claimId: "EXP-BAD", manager: "boss@example.com" },
          requestId: rid(),
        })
      ).run.id;
      receiptsItem = { session: employee, runId, item: await h.workItem(employee, runId, "receipts") };
    }, 120_000);
    afterAll(async () => {
      await proxy?.close();
    });

    const uploadArgs = (over: Record<string, unknown>) => ({
      fileName: "report.txt",
      contentType: "text/plain",
      contentBase64: b64("a report"),
      requestId: rid(),
      ...over,
    });
    const rows: {
      name: string;
      act: () => Promise<Result>;
      code: string;
      issues: string[] | ((r: Data) => void);
      after?: () => Promise<void>;
    }[] = [
      {
        name: "invalid base64",
        act: async () =>
          (await on("A", { kind: "agent", id: "a_bad" })).call(
            "upload",
            uploadArgs({ contentBase64: "not base64!" }),
          ),
        code: "invalid",
        issues: ["contentBase64: not valid base64"],
      },
      {
        name: "an empty file",
        act: async () =>
          (await on("B", { kind: "agent", id: "a_bad" })).call("upload", uploadArgs({ contentBase64: "" })),
        code: "invalid",
        issues: (error) => expect(error.issues).toEqual([expect.stringMatching(/^contentBase64: /)]),
      },
      {
        name: "a file of whitespace only (empty once decoded)",
        act: async () =>
          (await on("A", { kind: "agent", id: "a_bad" })).call(
            "upload",
            uploadArgs({ contentBase64: " \n " }),
          ),
        code: "invalid",
        issues: ["contentBase64: the file is empty; upload at least one byte"],
      },
      {
        name: "a name with a path separator",
        act: async () =>
          (await on("B", { kind: "agent", id: "a_bad" })).call(
            "upload",
            uploadArgs({ fileName: "../etc/report.txt" }),
          ),
        code: "invalid",
        issues: ["fileName: contains a path separator (/ or \\); send the file's own name, without folders"],
      },
      {
        name: "a name with a control character",
        act: async () =>
          (await on("A", { kind: "agent", id: "a_bad" })).call(
            "upload",
            uploadArgs({ fileName: "report\r\n.txt" }),
          ),
        code: "invalid",
        issues: ["fileName: contains a control character (a line break, tab or other); remove it"],
      },
      {
        name: "a content type that is not a media type",
        act: async () =>
          (await on("B", { kind: "agent", id: "a_bad" })).call(
            "upload",
            uploadArgs({ contentType: "plain text" }),
          ),
        code: "invalid",
        issues: [
          'contentType: "plain text" is not a media type; use type/subtype, such as application/pdf or text/plain',
        ],
      },
      {
        name: "one byte over describe.maxUploadBytes",
        act: async () =>
          (await on("A", { kind: "agent", id: "a_bad" })).call(
            "upload",
            uploadArgs({ contentBase64: Buffer.alloc(MAX_UPLOAD + 1, 7).toString("base64") }),
          ),
        code: "invalid",
        issues: [`contentBase64: ${MAX_UPLOAD + 1} bytes, over describe.maxUploadBytes (${MAX_UPLOAD})`],
      },
      {
        name: "a ref from another organization (never its metadata)",
        act: () =>
          receiptsItem.session.call("decide", {
            ...receiptsItem.item.decide.arguments,
            requestId: rid(),
            decision: "completed",
            output: { purpose: "Trip", totalUsd: 1, lines: [{ merchant: "Bus" }] },
            evidence: [{ kind: "file", ref: foreign.id }],
          }),
        code: "not_accepted",
        issues: (error) => {
          expect(error.issues).toEqual([`evidence ${foreign.id}: not found`, "evidence: file required"]);
          expect(JSON.stringify(error)).not.toContain(foreign.sha256);
          expect(JSON.stringify(error)).not.toContain("theirs.txt");
        },
        after: async () => {
          // The refusal may note its issues for the next attempt (a handoff); never the file's metadata.
          const view = await receiptsItem.session.ok("get_run", { runId: receiptsItem.runId });
          expect(view.data.steps.receipts).toBeUndefined();
          expect(JSON.stringify(view)).not.toContain(foreign.sha256);
        },
      },
      {
        name: "a store that is down",
        act: async () => {
          proxy.cut();
          try {
            // One call: resending a `retry` (as `call` does) would wait for the store to come back.
            return await viaProxy.callOnce(
              "upload",
              uploadArgs({ contentBase64: b64("bytes while the store is down") }),
            );
          } finally {
            proxy.restore();
          }
        },
        code: "retry",
        issues: (error) =>
          expect(error.message).toMatch(/file store cannot be reached now; nothing was stored/),
      },
    ];

    it.each(rows)("$name → $code, nothing in the bucket or the database", async (row) => {
      const before = await snapshot();
      const error = refused(await row.act(), row.code);
      if (typeof row.issues === "function") row.issues(error);
      else expect(error.issues).toEqual(row.issues);
      expect(await snapshot()).toEqual(before);
      await row.after?.();
    });

    it("at the limit an upload is stored, and the store back up takes the upload refused with retry", async () => {
      const agent = await on("A", { kind: "agent", id: "a_bad" });
      const atLimit = await agent.ok(
        "upload",
        uploadArgs({ contentBase64: Buffer.alloc(MAX_UPLOAD, 7).toString("base64") }),
      );
      expect(atLimit.bytes).toBe(MAX_UPLOAD);
      const retried = await viaProxy.ok(
        "upload",
        uploadArgs({ contentBase64: b64("bytes while the store is down") }),
      );
      expect(await s3.read(`default/${retried.sha256}`)).not.toBeNull();
    });
  });
});

/**
 * The same on `baton dev` (the in-process deployment, local store in its data directory): an object
 * changed on disk is refused at acceptance, and the gateway's signed links expire and refuse any
 * change (s3rver checks no presigned signature, so this is where expiry and tampering are proven
 * end to end).
 */
describe("evidence on the local store (baton dev --clock manual): tampering and link expiry (issue #10, §5)", () => {
  let baton: Deployment;
  let agent: McpSession;
  let finance: McpSession;
  const h = new Harness(async () => baton);

  beforeAll(async () => {
    baton = await startEmbedded({ clock: "manual" });
    await h.setup([]);
    agent = await h.agent("a_local");
    finance = await h.person("fin@example.com", ["finance-approver"]);
  }, 240_000);
  afterAll(() => h.teardown(), 120_000);

  it("a file changed on disk after upload makes the submission citing it not_accepted; its url expires after 15 minutes and refuses a changed signature", async () => {
    const runId = (
      await agent.ok("start_run", {
        process: "supplier-onboarding",
        inputs: { vendorName: "Disk", amount: 1 },
        requestId: rid(),
      })
    ).run.id;
    const good = await agent.ok("upload", {
      fileName: "report.txt",
      contentType: "text/plain",
      contentBase64: b64("clear"),
      requestId: rid(),
    });
    const bad = await agent.ok("upload", {
      fileName: "other.txt",
      contentType: "text/plain",
      contentBase64: b64("also clear"),
      requestId: rid(),
    });
    const path = join(baton.dataDir, "files", "default", bad.sha256);
    writeFileSync(path, Buffer.from("not clear"));
    const claim = await h.claim(agent, runId, "check_vendor");
    const submission = {
      token: claim.token,
      output: { cleared: true, summary: "Clear." },
      summary: "Screened.",
      next: "approve",
      reason: "Cleared.",
    };
    refused(
      await agent.call("submit", {
        ...submission,
        evidence: [{ kind: "file", ref: bad.id }],
        requestId: rid(),
      }),
      "not_accepted",
      [
        `evidence ${bad.id}: stored bytes no longer match the SHA-256 recorded at upload`,
        "evidence: file required",
      ],
    );
    expect(readFileSync(path, "utf8")).toBe("not clear");
    const view = await agent.ok("submit", {
      ...submission,
      evidence: [{ kind: "file", ref: good.id }],
      requestId: rid(),
    });
    const item = view.data.steps.check_vendor.evidence[0];
    expect(item).toMatchObject({ kind: "file", ref: good.id, sha256: sha("clear") });
    const opened = await fetch(item.url);
    expect(opened.status).toBe(200);
    expect(await opened.text()).toBe("clear");
    expect(opened.headers.get("content-disposition")).toBe(
      `attachment; filename="report.txt"; filename*=UTF-8''report.txt`,
    );
    const tampered = new URL(item.url);
    tampered.searchParams.set("exp", String(Number(tampered.searchParams.get("exp")) + 3600));
    expect((await fetch(tampered)).status).toBe(403);

    const clock = await TestClock.of(baton);
    await clock.advance(16 * 60_000);
    expect((await fetch(item.url)).status).toBe(403);
    const fresh = (await finance.ok("get_run", { runId })).data.steps.check_vendor.evidence[0].url;
    expect(fresh).not.toBe(item.url);
    expect((await fetch(fresh)).status).toBe(200);
  });
});
