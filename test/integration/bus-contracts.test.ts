import { CONTRACTS, call, envelope, MalformedMessage, NatsBus, requestWithRetry, SUBJECTS } from "@baton/bus";
import { type Identity, partitionOf } from "@baton/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DistributedDeployment, NATS_URL, startDistributed } from "../support/deploy.ts";

/**
 * Issue #9 (one contract per bus message), over real NATS: every subject of the catalog, served by
 * its own `baton serve` process, answers a message that breaks its schema with the structured error
 * (`code: "invalid"`, the subject, every issue) instead of handling it or crashing, and then serves a
 * valid call as before. The deployment runs with `BATON_PARTITIONS=16`.
 */

const PARTITIONS = 16;
const OPERATOR: Identity = {
  org: "default",
  kind: "person",
  id: "ops@example.com",
  groups: [],
  operator: true,
};

/** A run id that lives in partition 0, so a tick for it belongs on `engine.p0`. */
function runInPartitionZero(): string {
  for (let i = 0; ; i++) {
    const id = `r_contract_${i}`;
    if (partitionOf(id, PARTITIONS) === 0) return id;
  }
}

let baton: DistributedDeployment;
let bus: NatsBus;

beforeAll(async () => {
  baton = await startDistributed();
  // The notifier is not part of the default deployment: one replica, for its subject.
  baton.serve("notifier");
  bus = await NatsBus.connect(NATS_URL, "baton-test-contracts", baton.namespace);
});
afterAll(async () => {
  await bus?.close();
  await baton?.stop();
});

/** Sends `payload` on `subject` as it is (no contract checks), with retries while nobody serves it yet. */
function raw(subject: string, payload: unknown, identity: Identity | null = OPERATOR): Promise<unknown> {
  // Long enough for a service still starting on a busy machine (the notifier starts last).
  const deadline = Date.now() + 60_000;
  return requestWithRetry(bus, subject, envelope("test.malformed", identity, payload, deadline));
}

const runId = runInPartitionZero();

/**
 * Per subject: a payload that breaks its schema with the issues it must be answered with, and a
 * valid call with what it must answer.
 */
const CASES: {
  subject: string;
  malformed: unknown;
  issues: unknown[];
  valid: () => Promise<unknown>;
  answer: unknown;
}[] = [
  {
    subject: SUBJECTS.engineWrite(0),
    malformed: { tool: "tick" },
    issues: ["payload.runId: required"],
    valid: () =>
      call(
        bus,
        CONTRACTS.engineWrite,
        { tool: "tick", runId },
        { identity: null, deadline: soon(), partition: 0 },
      ),
    answer: { committed: false, rev: null },
  },
  {
    subject: SUBJECTS.engineWrite(0),
    malformed: {
      tool: "submit",
      args: { token: "t", output: {}, summary: "s", requestId: "q" },
      runId,
    },
    issues: ["payload.claimId: required"],
    valid: () =>
      call(
        bus,
        CONTRACTS.engineWrite,
        { tool: "tick", runId },
        { identity: null, deadline: soon(), partition: 0 },
      ),
    answer: { committed: false, rev: null },
  },
  {
    subject: SUBJECTS.engineRead,
    malformed: { tool: "get_run", args: {} },
    issues: ["payload.args.runId: required"],
    valid: () =>
      call(bus, CONTRACTS.engineRead, { tool: "get_run", args: { runId: "r_none" } }, asOperator()),
    answer: { ok: false, error: { code: "not_found" } },
  },
  {
    subject: SUBJECTS.engineJournal,
    malformed: { runId: "r_none", limit: 0 },
    issues: ["payload.limit: at least 1"],
    valid: () => call(bus, CONTRACTS.engineJournal, { runId: "r_none" }, asOperator()),
    answer: { ok: false, error: { code: "not_found" } },
  },
  {
    subject: SUBJECTS.engineReport,
    malformed: { name: "advisory-draft", since: "yesterday" },
    issues: [expect.stringMatching(/^payload\.since: /)],
    valid: () => call(bus, CONTRACTS.engineReport, { name: "nothing-here" }, asOperator()),
    answer: { ok: false, error: { code: "not_found" } },
  },
  {
    subject: SUBJECTS.registry,
    malformed: { op: "publish" },
    issues: ["payload.draftId: required"],
    valid: () => call(bus, CONTRACTS.registry, { op: "list_processes", args: {} }, asOperator()),
    answer: { ok: true, data: { items: [], nextCursor: null } },
  },
  {
    subject: SUBJECTS.registryRead,
    malformed: { name: "" },
    issues: ["payload.name: at least 1 characters"],
    valid: () => call(bus, CONTRACTS.registryRead, { name: "nothing-here" }, asOperator()),
    answer: { ok: false, error: { code: "not_found" } },
  },
  {
    subject: SUBJECTS.evidence,
    malformed: { op: "verify", refs: "f_1" },
    issues: ["payload.refs: expected array, got string"],
    valid: () => call(bus, CONTRACTS.evidence, { op: "get", id: "f_none" }, asOperator()),
    answer: null,
  },
  {
    subject: SUBJECTS.notifier,
    malformed: { op: "webhook_remove" },
    issues: ["payload.id: required"],
    valid: () => call(bus, CONTRACTS.notifier, { op: "webhook_list" }, asOperator()),
    answer: { ok: true, data: { webhooks: [] } },
  },
  {
    subject: SUBJECTS.scheduler,
    malformed: { op: "rewind" },
    issues: [expect.stringMatching(/^payload\.op: /)],
    valid: () => call(bus, CONTRACTS.scheduler, { op: "now" }, asOperator()),
    answer: { ok: true, data: { manual: false } },
  },
];

function soon(): number {
  return Date.now() + 20_000;
}

/** A valid call's options: as the operator. */
function asOperator() {
  return { identity: OPERATOR, deadline: soon() };
}

describe("every catalog subject refuses a malformed message with the structured error and keeps serving (issue #9)", () => {
  it.each(CASES)("$subject: $issues", async ({ subject, malformed, issues, valid, answer }) => {
    const refused = await raw(subject, malformed).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(MalformedMessage);
    expect(refused).toMatchObject({ code: "invalid", subject, retryable: false, issues });
    expect(await valid()).toMatchObject(answer as object);
  });

  it("a subject that serves callers refuses an envelope without one; a frame that is not an envelope, or not JSON, is refused too", async () => {
    await expect(raw(SUBJECTS.registry, { op: "list_processes", args: {} }, null)).rejects.toMatchObject({
      name: "MalformedMessage",
      subject: SUBJECTS.registry,
      issues: ["identity: required: this subject serves callers"],
    });
    const frame = await bus.connection.request(
      `${baton.namespace}.${SUBJECTS.engineRead}`,
      new TextEncoder().encode(JSON.stringify({ type: "x", id: "y", payload: {} })),
      { timeout: 20_000 },
    );
    expect(JSON.parse(new TextDecoder().decode(frame.data))).toMatchObject({
      ok: false,
      code: "invalid",
      subject: SUBJECTS.engineRead,
      issues: ["identity: required", "deadline: required"],
    });
    const text = await bus.connection.request(
      `${baton.namespace}.${SUBJECTS.scheduler}`,
      new TextEncoder().encode("not json"),
      { timeout: 20_000 },
    );
    expect(JSON.parse(new TextDecoder().decode(text.data))).toMatchObject({
      ok: false,
      code: "invalid",
      subject: SUBJECTS.scheduler,
      issues: ["message: not JSON"],
    });
  });

  it("after all of that every service still answers its tools over MCP", async () => {
    const agent = await baton.session({ kind: "agent", id: "a_after_malformed" });
    try {
      expect(await agent.call("list_processes", {})).toMatchObject({ ok: true });
      expect(await agent.call("get_work", {})).toMatchObject({ ok: true });
      expect(await agent.call("get_run", { runId: "r_none" })).toMatchObject({
        ok: false,
        error: { code: "not_found" },
      });
    } finally {
      await agent.close();
    }
  });
});
