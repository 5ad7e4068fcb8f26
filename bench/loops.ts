/**
 * The bench's two load shapes (issue #15).
 *
 * - Closed loop: each client walks start_run → claim → submit of `bench-step` again and again, as
 *   fast as answers come; the rate is what the server sustains at that concurrency.
 * - Arrival rate: runs of `bench-approval` start at a fixed rate whatever the server does (an open
 *   model, so a slow server queues work instead of slowing the load); agents poll `get_work`, claim
 *   and submit; people of the `approver` group poll `get_work` and approve.
 */
import { randomUUID } from "node:crypto";
import type { BenchClient } from "./client.ts";

/** The closed loop's process: one agent step and a finish (bench/processes/bench-step). */
export const CLOSED_PROCESS = "bench-step";
/** The arrival mode's process: an agent step, then a person's approval (bench/processes/bench-approval). */
export const ARRIVAL_PROCESS = "bench-approval";
/** The group whose people decide `bench-approval`'s approval (its `approver` role is bound to it). */
export const APPROVER_GROUP = "approvers";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Acknowledged transitions (calls answered `ok` that commit one) of a loop. */
export interface LoopCounts {
  transitions: number;
  runs: number;
}

/**
 * Every client walks start_run → claim → submit of {@link CLOSED_PROCESS} until `seconds` have
 * passed (3 acknowledged transitions per run); a refused call abandons that run and starts the next.
 */
export async function closedLoop(clients: BenchClient[], seconds: number): Promise<LoopCounts> {
  const counts: LoopCounts = { transitions: 0, runs: 0 };
  const end = Date.now() + seconds * 1000;
  await Promise.all(
    clients.map(async (c, i) => {
      let n = 0;
      while (Date.now() < end) {
        n++;
        const started = await c.call("start_run", {
          process: CLOSED_PROCESS,
          inputs: { n },
          requestId: randomUUID(),
        });
        if (!started.ok) continue;
        counts.transitions++;
        const runId = started.data.run.id;
        const claim = await c.call("claim", { runId, stepId: "work", requestId: randomUUID() });
        if (!claim.ok) continue;
        counts.transitions++;
        const submit = await c.call("submit", {
          token: claim.data.token,
          output: { n },
          summary: `bench ${i}/${n}`,
          requestId: randomUUID(),
        });
        if (!submit.ok) continue;
        counts.transitions++;
        counts.runs++;
      }
    }),
  );
  return counts;
}

/** What the arrival mode did besides the latencies its clients recorded. */
export interface ArrivalCounts extends LoopCounts {
  /** Runs the schedule asked for (rate × seconds). */
  offered: number;
  /** Runs decided (approved) within the time. */
  decided: number;
  /** From an agent step's `readySince` (its commit, on the server's clock) to its claim's answer, ms. */
  readyToClaim: number[];
  /** Claims and decisions that lost to another agent or person (`conflict`: expected, not errors). */
  conflicts: number;
}

/** Options of {@link arrivalLoop}. */
export interface ArrivalOptions {
  /** Starts the runs (an agent identity). */
  starter: BenchClient;
  /** Poll `get_work`, claim and submit. */
  agents: BenchClient[];
  /** People of {@link APPROVER_GROUP}: poll `get_work` and approve. */
  people: BenchClient[];
  /** Runs started per second. */
  rate: number;
  seconds: number;
  /** How long an agent or person waits after a `get_work` that found nothing, ms. */
  pollMs: number;
}

/**
 * Runs started at a fixed rate for `seconds` (each start sent on schedule, not after the previous
 * answer); agents and people work until the time is up. Calls still in flight then are awaited.
 */
export async function arrivalLoop(o: ArrivalOptions): Promise<ArrivalCounts> {
  const counts: ArrivalCounts = {
    transitions: 0,
    runs: 0,
    offered: 0,
    decided: 0,
    readyToClaim: [],
    conflicts: 0,
  };
  const t0 = Date.now();
  const end = t0 + o.seconds * 1000;
  const inFlight: Promise<void>[] = [];
  const starting = (async () => {
    for (let i = 0; ; i++) {
      const at = t0 + (i * 1000) / o.rate;
      if (at >= end) break;
      const wait = at - Date.now();
      if (wait > 0) await sleep(wait);
      counts.offered++;
      inFlight.push(
        o.starter
          .call("start_run", { process: ARRIVAL_PROCESS, inputs: { n: i }, requestId: randomUUID() })
          .then((r) => {
            if (r.ok) {
              counts.transitions++;
              counts.runs++;
            }
          }),
      );
    }
  })();
  const agent = async (c: BenchClient) => {
    while (Date.now() < end) {
      const work = await c.call("get_work", { process: ARRIVAL_PROCESS, limit: 20 });
      const items = work.ok ? (work.data.items as AgentItem[]) : [];
      if (items.length === 0) {
        await sleep(o.pollMs);
        continue;
      }
      // Each pass starts at a random place in the list, so agents race less for one step; after one
      // step is done the list is stale, so the agent asks again, as an agent working steps one at a
      // time does.
      const k = Math.floor(Math.random() * items.length);
      for (let j = 0; j < items.length && Date.now() < end; j++) {
        const item = items[(j + k) % items.length] as AgentItem;
        const claim = await c.call("claim", { ...item.claim.arguments, requestId: randomUUID() }, [
          "conflict",
        ]);
        if (!claim.ok) {
          if (claim.error.code === "conflict") counts.conflicts++;
          continue;
        }
        counts.transitions++;
        counts.readyToClaim.push(Date.now() - Date.parse(item.readySince));
        const submit = await c.call("submit", {
          token: claim.data.token,
          output: { n: claim.data.data.inputs.n },
          summary: "bench: done",
          requestId: randomUUID(),
        });
        if (submit.ok) counts.transitions++;
        break;
      }
    }
  };
  const person = async (c: BenchClient) => {
    while (Date.now() < end) {
      const work = await c.call("get_work", { process: ARRIVAL_PROCESS, limit: 20 });
      const items = work.ok ? (work.data.items as PersonItem[]) : [];
      if (items.length === 0) {
        await sleep(o.pollMs);
        continue;
      }
      const k = Math.floor(Math.random() * items.length);
      for (let j = 0; j < items.length && Date.now() < end; j++) {
        const item = items[(j + k) % items.length] as PersonItem;
        const decided = await c.call(
          "decide",
          { ...item.workItem.decide.arguments, decision: "approved", requestId: randomUUID() },
          ["conflict"],
        );
        if (decided.ok) {
          counts.transitions++;
          counts.decided++;
        } else if (decided.error.code === "conflict") counts.conflicts++;
      }
    }
  };
  await Promise.all([starting, ...o.agents.map((c) => agent(c)), ...o.people.map((c) => person(c))]);
  await Promise.all(inFlight);
  return counts;
}

/** An agent's `get_work` entry, as far as the bench reads it. */
interface AgentItem {
  readySince: string;
  claim: { arguments: Record<string, unknown> };
}

/** A person's `get_work` entry, as far as the bench reads it. */
interface PersonItem {
  workItem: { decide: { arguments: Record<string, unknown> } };
}
