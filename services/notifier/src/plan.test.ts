import { NOTIFICATION_EVENT_TYPES } from "@baton/protocol";
import { describe, expect, it } from "vitest";
import { type DomainEventMessage, mailFor, type RunFacts, webhookData } from "./payload.ts";
import { type MailPlan, planDeliveries, type SubscriptionTarget } from "./plan.ts";

const T = Date.parse("2026-10-06T09:00:00Z");
const facts: RunFacts = {
  process: "expense-approval",
  version: 3,
  step: { kind: "approve", instructions: "Approve when it matches." },
  dueAt: T + 3_600_000,
};
const mail: MailPlan = { enabled: true, operatorsEmail: "ops@example.com", operatorGroup: "operators" };
const event = (over: Partial<DomainEventMessage>): DomainEventMessage => ({
  id: 7,
  type: "work_item.opened",
  runId: "r_x",
  org: "acme",
  mode: "live",
  at: T,
  stepId: "approve",
  detail: { workItemId: "w_3", kind: "approve", assignedTo: { group: "managers" } },
  ...over,
});
const sub = (id: string, over: Partial<SubscriptionTarget> = {}): SubscriptionTarget => ({
  id,
  events: null,
  includeTestRuns: false,
  createdAt: T - 1,
  ...over,
});
const plan = (
  e: DomainEventMessage,
  subs: SubscriptionTarget[],
  groups: Record<string, string> = {},
  m = mail,
) =>
  planDeliveries(e, facts, subs, new Map(Object.entries(groups)), m, "https://baton.example.com").map((p) => [
    p.destination,
    p.state,
  ]);

describe("who hears of an event (issue #11)", () => {
  it("webhooks: subscriptions that want the type and existed when it happened", () => {
    expect(
      plan(event({}), [
        sub("wh_all"),
        sub("wh_opened", { events: ["work_item.opened"] }),
        sub("wh_other", { events: ["run.ended"] }),
        sub("wh_later", { createdAt: T + 1 }),
      ]),
    ).toEqual([
      ["webhook:wh_all", "pending"],
      ["webhook:wh_opened", "pending"],
    ]);
  });

  it("mail: a person assignee by their email; a group only through its mailing address", () => {
    expect(plan(event({ detail: { assignedTo: { person: "mia@example.com" } } }), [])).toEqual([
      ["mail:mia@example.com", "pending"],
    ]);
    expect(plan(event({}), [])).toEqual([]);
    expect(plan(event({}), [], { managers: "Managers@Example.com" })).toEqual([
      ["mail:managers@example.com", "pending"],
    ]);
    expect(plan(event({}), [], { managers: "m@example.com" }, { ...mail, enabled: false })).toEqual([]);
  });

  it("overdue (§2.2 due): the assignee and the operators, each address once; an agent is never mailed", () => {
    const overdue = event({
      type: "step.overdue",
      detail: { due: "2026-10-06T10:00:00.000Z", assignedTo: { person: "OPS@example.com" }, claimedBy: null },
    });
    expect(plan(overdue, [], { operators: "ops-team@example.com" })).toEqual([
      ["mail:ops@example.com", "pending"],
      ["mail:ops-team@example.com", "pending"],
    ]);
    const agentStep = event({
      type: "step.overdue",
      detail: { due: "x", assignedTo: null, claimedBy: "a_bot" },
    });
    expect(plan(agentStep, [], {}, { ...mail, operatorsEmail: null })).toEqual([]);
  });

  it("a test run's deliveries are suppressed, except webhooks that include test runs (§3 test mode)", () => {
    const test = event({ mode: "test", detail: { assignedTo: { person: "mia@example.com" } } });
    expect(plan(test, [sub("wh_plain"), sub("wh_fleet", { includeTestRuns: true })])).toEqual([
      ["webhook:wh_plain", "suppressed"],
      ["webhook:wh_fleet", "pending"],
      ["mail:mia@example.com", "suppressed"],
    ]);
  });

  it("types nobody subscribes to are not delivered at all", () => {
    expect(plan(event({ type: "step.checked" }), [sub("wh_all")])).toEqual([]);
  });

  it("who hears of an event never depends on its facts (issue #15: the notifier decides before reading them)", () => {
    const none: RunFacts = { process: "", version: 0, step: null, dueAt: null };
    const destinations = (e: DomainEventMessage, f: RunFacts, subs: SubscriptionTarget[], m: MailPlan) =>
      planDeliveries(
        e,
        f,
        subs,
        new Map([
          ["managers", "m@example.com"],
          ["operators", "o@example.com"],
        ]),
        m,
        "https://b",
      ).map((p) => [p.destination, p.channel, p.state, p.subscriptionId, p.address, p.reason]);
    // Every type the notifier delivers, and one it never does.
    const types = [...NOTIFICATION_EVENT_TYPES, "step.checked"];
    const subsets = [
      [],
      [sub("wh_all")],
      [sub("wh_ended", { events: ["run.ended"], includeTestRuns: true })],
    ];
    let heard = 0;
    for (const type of types)
      for (const mode of ["live", "test"] as const)
        for (const assignedTo of [{ person: "mia@example.com" }, { group: "managers" }, null])
          for (const subs of subsets)
            for (const m of [mail, { ...mail, enabled: false }]) {
              const e = event({ type, mode, detail: { due: "x", workItemId: "w_1", assignedTo } });
              const withFacts = destinations(e, facts, subs, m);
              expect(destinations(e, none, subs, m)).toEqual(withFacts);
              heard += withFacts.length;
            }
    expect(heard).toBeGreaterThan(100);
  });
});

describe("what a notification says (issue #11)", () => {
  it("the webhook data names the run, process, version, step, work item, assignee and due, and nothing else", () => {
    const data = webhookData(
      event({
        detail: { workItemId: "w_3", kind: "approve", assignedTo: { group: "managers" }, token: "secret" },
      }),
      facts,
      "https://baton.example.com/",
    );
    expect(data).toEqual({
      org: "acme",
      runId: "r_x",
      process: "expense-approval",
      version: 3,
      mode: "live",
      stepId: "approve",
      stepKind: "approve",
      workItemId: "w_3",
      assignee: { group: "managers" },
      due: "2026-10-06T10:00:00.000Z",
      overdue: false,
      link: "https://baton.example.com/ui/#/runs/r_x",
    });
  });

  it("run.ended carries its state and outcome", () => {
    const data = webhookData(
      event({
        type: "run.ended",
        stepId: undefined as never,
        detail: { state: "ended", outcome: "approved", by: "server" },
      }),
      { ...facts, step: null, dueAt: null },
      "https://b",
    );
    expect(data).toMatchObject({ state: "ended", outcome: "approved" });
    expect(data).not.toHaveProperty("by");
  });

  it("a mail says what to do, by when, and the run", () => {
    const m = mailFor(event({}), facts, "https://baton.example.com", "managers@example.com");
    expect(m?.subject).toBe("[Baton] Approval needed: expense-approval / approve");
    expect(m?.text).toContain("  Approve when it matches.");
    expect(m?.text).toContain("By when: 2026-10-06T10:00:00.000Z");
    expect(m?.text).toContain("The run: https://baton.example.com/ui/#/runs/r_x");
    expect(mailFor(event({ type: "run.started" }), facts, "https://b", "x@example.com")).toBeNull();
  });
});
