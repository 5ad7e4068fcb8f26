import type { ChildProcess } from "node:child_process";
import { join } from "node:path";
import type { McpSession, Result } from "@baton/conformance/mcp";
import { partitionOf } from "@baton/protocol";
import { connect } from "nats";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DistributedDeployment, NATS_URL, REPO, startDistributed } from "../support/deploy.ts";

/**
 * The bar's "Safe": no acknowledged write lost or applied twice when a process is killed. Two engine
 * replicas share the partitions (NATS KV leases, ARCHITECTURE rule 5); one is killed with SIGKILL in
 * the middle of traffic. Clients retry `retry` answers with the same requestId (§4.3). Afterwards
 * every run has completed exactly once and the journal holds every write exactly once.
 */
describe("engine fail-over under traffic (ARCHITECTURE rule 5, §4)", () => {
  let baton: DistributedDeployment;
  let second: ChildProcess;
  /** Partitions the second replica owned when it was killed. */
  const orphaned = new Set<number>();

  beforeAll(async () => {
    baton = await startDistributed();
    await baton.publish(join(REPO, "bench/processes/bench-step"));
    second = baton.serve("engine", { BATON_REPLICA_ID: "engine-b" });
    // Wait until the second replica owns its full share, ceil(16 / 2) partitions (the first one gives up
    // its extra share). Breaking off at the first partition it took made the check below a gamble: with
    // one orphaned partition of 16, ~30 runs started after the kill all missed it about one time in seven.
    const nc = await connect({ servers: NATS_URL });
    const kv = await nc.jetstream().views.kv(`${baton.namespace}_partitions`);
    const deadline = Date.now() + 60_000;
    const owners = new Map<string, string>();
    for (;;) {
      orphaned.clear();
      owners.clear();
      // Direct gets, not kv.keys(), which can hang while entries expire (see KvPartitionOwnership.liveMembers).
      for (let p = 0; p < 16; p++) {
        const entry = await kv.get(`p.${p}`);
        const owner = entry?.operation === "PUT" ? entry.string() : "";
        owners.set(`p.${p}`, owner);
        if (owner === "engine-b") orphaned.add(p);
      }
      if (orphaned.size >= 8) break;
      if (Date.now() > deadline) {
        throw new Error(
          `the second engine took ${orphaned.size} partitions, not its share of 8; owners ${JSON.stringify(Object.fromEntries(owners))}\n${baton.logs()}`,
        );
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    await nc.close();
  }, 240_000);

  afterAll(async () => {
    await baton?.stop();
  });

  /** A write retried with the same requestId while the server answers retry (§4.3 "Retry with the same requestId"). */
  async function persist(
    session: McpSession,
    tool: "start_run" | "claim" | "submit",
    args: Record<string, unknown>,
  ): Promise<Result> {
    const deadline = Date.now() + 90_000;
    for (;;) {
      const result = await session.call(tool, args);
      if (result.ok || result.error.code !== "retry") return result;
      if (Date.now() > deadline) throw new Error(`${tool} kept answering retry`);
    }
  }

  it("kills one of two engines mid-traffic: every run completes once, every write is journaled once", async () => {
    const agents = await Promise.all(
      Array.from({ length: 6 }, (_, i) => baton.session({ kind: "agent", id: `a_fail_${i}` })),
    );
    const runsPerAgent = 8;
    let killed = false;
    const started: string[] = [];
    const afterKill: string[] = [];
    const work = agents.map(async (agent, i) => {
      for (let n = 0; n < runsPerAgent; n++) {
        if (i === 0 && n === 3 && !killed) {
          killed = true;
          second.kill("SIGKILL");
        }
        const start = await persist(agent, "start_run", {
          process: "bench-step",
          inputs: { n },
          requestId: `s-${i}-${n}`,
        });
        expect(start.ok, JSON.stringify(start)).toBe(true);
        if (!start.ok) return;
        const runId = start.data.run.id as string;
        started.push(runId);
        if (killed) afterKill.push(runId);
        const claim = await persist(agent, "claim", { runId, stepId: "work", requestId: `c-${i}-${n}` });
        expect(claim.ok, JSON.stringify(claim)).toBe(true);
        if (!claim.ok) return;
        const submit = await persist(agent, "submit", {
          token: claim.data.token,
          output: { n },
          summary: `run ${i}/${n}`,
          requestId: `u-${i}-${n}`,
        });
        expect(submit.ok, JSON.stringify(submit)).toBe(true);
      }
    });
    await Promise.all(work);
    await Promise.all(agents.map((a) => a.close()));
    expect(killed).toBe(true);
    // The kill mattered: runs started after it live in partitions only the killed replica served.
    expect(afterKill.filter((id) => orphaned.has(partitionOf(id, 16))).length).toBeGreaterThan(0);
    expect(new Set(started).size).toBe(agents.length * runsPerAgent);

    const db = new pg.Client({ connectionString: baton.databaseUrl });
    await db.connect();
    const runs = await db.query("select state, outcome, rev from runs where process = 'bench-step'");
    expect(runs.rows).toHaveLength(agents.length * runsPerAgent);
    expect(runs.rows.every((r) => r.state === "ended" && r.outcome === "done" && r.rev === 3)).toBe(true);
    const journal = await db.query(
      "select request_id, count(*)::int as n from run_journal where request_id is not null group by request_id having count(*) <> 1",
    );
    expect(journal.rows, "a write applied twice").toEqual([]);
    const writes = await db.query("select count(*)::int as n from run_journal where process = 'bench-step'");
    expect(writes.rows[0].n).toBe(3 * agents.length * runsPerAgent);
    await db.end();
  }, 240_000);
});
