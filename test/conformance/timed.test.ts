import { timedDueScenarios } from "@baton/conformance/scenarios/timed/due";
import { timedEventScenarios } from "@baton/conformance/scenarios/timed/events";
import { LEASE, timedLeaseScenarios } from "@baton/conformance/scenarios/timed/leases";
import { timedWaitScenarios } from "@baton/conformance/scenarios/timed/waits";
import { LEASE_WHO, TIMED_PUBLICATIONS } from "@baton/conformance/scenarios/timed/walks";
import { Harness } from "@baton/conformance/support";
import { DAY, HOUR, iso } from "@baton/conformance/time";
import { claimStep } from "@baton/conformance/walk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MANUAL_CLOCK_DEPLOYMENTS, TestClock } from "../support/clock.ts";
import type { Deployment, DistributedDeployment } from "../support/deploy.ts";
import { journalOf, listenEvents, timersOf } from "../support/journal.ts";

/**
 * The conformance suite's timed scenarios (issue #5): every timed rule of the spec end to end over
 * MCP, with the clock moved by the admin call `baton clock advance` makes — waits, time-outs racing
 * events, deadlines and leases — against `baton dev --clock manual` and against the services on NATS
 * and PostgreSQL sharing one manual clock. Each deployment starts once for the whole file. Last,
 * Baton's own records of the timers it fired (the bus and the journal), which no other server has.
 */
describe.each(MANUAL_CLOCK_DEPLOYMENTS)("timed conformance — %s", (label, start) => {
  let baton: Deployment;
  const h = new Harness(async () => {
    baton = await start();
    return { ...baton, clock: await TestClock.of(baton) };
  });
  beforeAll(() => h.setup(TIMED_PUBLICATIONS), 240_000);
  afterAll(() => h.teardown(), 120_000);

  timedWaitScenarios(h);
  timedEventScenarios(h);
  timedDueScenarios(h);
  timedLeaseScenarios(h);

  // The bus and the timers table exist only in the distributed deployment; these tests are defined only there.
  if (!label.startsWith("distributed")) return;
  describe("Baton's records of the timers it fired (not part of the protocol)", () => {
    it("[#74] on NATS: the overdue event reaches the bus as events.<org>.step.overdue, once per attempt, and every fired timer is in exactly one journal entry's detail.timers (C §2.2 due; ARCHITECTURE outbox)", async () => {
      const { agent } = await h.sessionsOf(LEASE_WHO);
      const clock = h.clock;
      const d = baton as DistributedDeployment;
      const tap = await listenEvents(d.namespace, "events.*.step.overdue");
      try {
        const t0 = await clock.now();
        const started = await agent.ok("start_run", { process: "due-agent", inputs: {}, mode: "test" });
        const runId = started.run.id as string;
        const claim = await claimStep(agent, runId, "triage");
        await clock.advance(LEASE); // the lease ends: one tick
        await clock.advance(HOUR - LEASE); // due passes: one tick, one overdue event
        const heard = await tap.next((e) => e.data.runId === runId);
        expect(heard.subject).toBe("events.default.step.overdue");
        expect(heard.data).toMatchObject({
          type: "step.overdue",
          runId,
          org: "default",
          mode: "test",
          stepId: "triage",
          at: t0 + HOUR,
          detail: { due: iso(t0 + HOUR) },
        });
        await clock.advance(DAY); // nothing more is due for this attempt

        const journal = await journalOf(d.databaseUrl, [runId]);
        expect(journal.map((r) => r.command)).toEqual(["start_run", "claim", "tick", "tick"]);
        expect(journal.filter((r) => r.command === "tick").every((r) => r.actor === "server")).toBe(true);
        // Fired timers are counted from what each transition applied (`detail.timers`), not from
        // the number of tick rows: each timer is in exactly one entry, at its own fire time.
        expect(journal.map((r) => r.timers)).toEqual([
          [],
          [],
          [{ kind: "lease", stepId: "triage", at: iso(t0 + LEASE) }],
          [{ kind: "due", stepId: "triage", at: iso(t0 + HOUR) }],
        ]);
        const overdue = journal.flatMap((r) => r.events).filter((e) => e.type === "step.overdue");
        expect(overdue).toHaveLength(1);
        const stale = await agent.write("submit", {
          token: claim.token,
          output: { verdict: "x" },
          summary: "x",
        });
        expect(stale.ok ? null : stale.error.code).toBe("stale");
      } finally {
        await tap.close();
      }
    });

    it("on PostgreSQL: a run's timers are written with its transitions and cancelled with the run (issue #5 durable timers)", async () => {
      const { agent, operator } = await h.sessionsOf(LEASE_WHO);
      const clock = h.clock;
      const d = baton as DistributedDeployment;
      const started = await agent.ok("start_run", { process: "due-agent", inputs: {} });
      const runId = started.run.id as string;
      expect((await timersOf(d.databaseUrl, [runId])).map((t) => t.kind)).toEqual(["due"]);
      await claimStep(agent, runId, "triage");
      expect((await timersOf(d.databaseUrl, [runId])).map((t) => t.kind)).toEqual(["due", "lease"]);
      const cancelled = await operator.ok("cancel", { runId, reason: "Duplicate request." });
      expect(cancelled.run.state).toBe("cancelled");
      expect(await timersOf(d.databaseUrl, [runId])).toEqual([]);
      await clock.advance(DAY);
      expect((await journalOf(d.databaseUrl, [runId])).map((r) => r.command)).toEqual([
        "start_run",
        "claim",
        "cancel",
      ]);
    });
  });
});
