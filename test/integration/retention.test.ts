import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { eventsStream } from "@baton/bus";
import type { McpSession } from "@baton/conformance/mcp";
import { connect, type NatsConnection } from "nats";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HOUR, TestClock } from "../support/clock.ts";
import { type DistributedDeployment, NATS_URL, REPO, startDistributed } from "../support/deploy.ts";
import { until } from "../support/processes.ts";

/**
 * Issue #13, retention: idempotency records are kept for `BATON_IDEMPOTENCY_RETENTION_HOURS` of the
 * deployment's clock and then pruned by the scheduler in batches; a replay within the window gets
 * the original result (§4.3), a replay after it is answered `conflict` and applied never again —
 * `start_run` (its run id comes from the requestId) and a write to a run (the run's journal, kept
 * for ever, remembers the requestId). The events stream is capped by age and size.
 */
describe("retention of idempotency records and of the events stream (issue #13; §4.3 idempotency)", () => {
  let baton: DistributedDeployment;
  let clock: TestClock;
  let agent: McpSession;
  let db: pg.Client;
  let nc: NatsConnection;

  beforeAll(async () => {
    baton = await startDistributed({
      clock: "manual",
      env: {
        BATON_IDEMPOTENCY_RETENTION_HOURS: "1",
        BATON_RETENTION_INTERVAL_MS: "200",
        BATON_EVENTS_MAX_AGE_HOURS: "2",
        BATON_EVENTS_MAX_BYTES: "10485760",
      },
    });
    await baton.publish(join(REPO, "bench/processes/bench-step"));
    clock = await TestClock.of(baton);
    agent = await baton.session({ kind: "agent", id: "a_retention" });
    db = new pg.Client({ connectionString: baton.databaseUrl });
    await db.connect();
    nc = await connect({ servers: NATS_URL });
  }, 240_000);

  afterAll(async () => {
    await agent?.close().catch(() => undefined);
    await db?.end().catch(() => undefined);
    await nc?.close().catch(() => undefined);
    await baton?.stop();
  });

  const records = async (...requestIds: string[]) =>
    Number(
      (await db.query("select count(*) as n from idempotency where request_id = any($1)", [requestIds]))
        .rows[0].n,
    );

  it("the events stream keeps events for BATON_EVENTS_MAX_AGE_HOURS and at most BATON_EVENTS_MAX_BYTES", async () => {
    const jsm = await nc.jetstreamManager();
    const info = await jsm.streams.info(eventsStream(baton.namespace));
    expect(info.config.max_age).toBe(2 * 3_600 * 1_000_000_000);
    expect(info.config.max_bytes).toBe(10_485_760);
  });

  it("a replay within the window returns the original result; past it, start_run and claim are answered conflict and applied never again", async () => {
    const startId = `start-${randomUUID()}`;
    const claimId = `claim-${randomUUID()}`;
    const start = await agent.ok("start_run", {
      process: "bench-step",
      inputs: { n: 1 },
      requestId: startId,
    });
    const runId = start.run.id as string;
    const claim = await agent.ok("claim", { runId, stepId: "work", requestId: claimId });
    // Within the window: the original result, token included (§4.3).
    expect(
      await agent.ok("start_run", { process: "bench-step", inputs: { n: 1 }, requestId: startId }),
    ).toEqual(start);
    expect((await agent.ok("claim", { runId, stepId: "work", requestId: claimId })).token).toBe(claim.token);
    expect(await records(startId, claimId)).toBe(2);

    // Two hours later (the lease of 10 minutes ended too), the scheduler prunes both records.
    await clock.advance(2 * HOUR);
    await until(async () => (await records(startId, claimId)) === 0, "the records pruned", 30_000, 100);

    const again = await agent.call("start_run", {
      process: "bench-step",
      inputs: { n: 1 },
      requestId: startId,
    });
    expect(again).toMatchObject({ ok: false, error: { code: "conflict" } });
    const replayed = await agent.call("claim", { runId, stepId: "work", requestId: claimId });
    expect(replayed).toMatchObject({ ok: false, error: { code: "conflict" } });
    expect(JSON.stringify(replayed)).toContain("retention");
    // Never applied twice: one run, one claim in the journal; the step is free for a new call.
    expect(Number((await db.query("select count(*) as n from runs where id = $1", [runId])).rows[0].n)).toBe(
      1,
    );
    const claims = await db.query(
      "select count(*) as n from run_journal where run_id = $1 and command = 'claim'",
      [runId],
    );
    expect(Number(claims.rows[0].n)).toBe(1);
    const fresh = await agent.ok("claim", { runId, stepId: "work", requestId: `claim-${randomUUID()}` });
    expect(fresh.token).not.toBe(claim.token);
    // A new write's record is kept (younger than the window).
    const submitId = `submit-${randomUUID()}`;
    await agent.ok("submit", { token: fresh.token, output: { n: 1 }, summary: "Done.", requestId: submitId });
    expect(await records(submitId)).toBe(1);
  });
});
