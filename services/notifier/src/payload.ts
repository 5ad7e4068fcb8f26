// What a notification says (issue #11): the webhook payload's `data` and a mail's text. Pure.
import { iso } from "@baton/process";
import type { AssignedTo, NotificationEventType } from "@baton/protocol";
import { z } from "zod";

/**
 * A domain event as the outbox relays it onto `events.<org>.<type>` (and as the notifier reads it
 * from the outbox table in `baton dev`): the outbox row id, and ids only (issue #11: the notifier
 * reads the rest from PostgreSQL). `detail` holds the few values the engine's core put there
 * (`workItemId`, `assignedTo`, `due`, `state`, `outcome`, an event `name`).
 */
export const DomainEventMessage = z.object({
  id: z.number().int().positive(),
  type: z.string().min(1),
  runId: z.string().min(1),
  org: z.string().min(1),
  mode: z.enum(["live", "test"]),
  /** Epoch ms, injected clock. */
  at: z.number(),
  stepId: z.string().optional(),
  detail: z.record(z.string(), z.unknown()).optional(),
  /** The W3C `traceparent` of the transition that caused it, when spans are on (issue #13); never sent on. */
  trace: z.string().optional(),
});
export type DomainEventMessage = z.infer<typeof DomainEventMessage>;

/** What the notifier read from PostgreSQL about the event's run and step. */
export interface RunFacts {
  process: string;
  version: number;
  /** The step's kind and what it asks (`agent:`/`task:`/`approve:` text), when the event names a step. */
  step: { kind: string; instructions: string | null } | null;
  /** When the step's current attempt is due, epoch ms; null when it declares no `due`. */
  dueAt: number | null;
}

/** The run's page in the web console (`/ui/#/runs/<id>`, issue #16). */
export function runLink(publicUrl: string, runId: string): string {
  return `${publicUrl.replace(/\/+$/, "")}/ui/#/runs/${encodeURIComponent(runId)}`;
}

function assignedTo(value: unknown): AssignedTo | null {
  if (!value || typeof value !== "object") return null;
  const v = value as Record<string, unknown>;
  if (typeof v.person === "string") return { person: v.person };
  if (typeof v.group === "string") return { group: v.group };
  return null;
}

/** Who a step's work is with, for the payload and the mail: a work item's assignee, or the agent holding the claim. */
export type Assignee = AssignedTo | { agent: string };

/** The assignee an event names (`work_item.opened`, `step.overdue`), or null. */
export function assigneeOf(event: DomainEventMessage): Assignee | null {
  const detail = event.detail ?? {};
  const assigned = assignedTo(detail.assignedTo);
  if (assigned) return assigned;
  if (event.type === "step.overdue" && typeof detail.claimedBy === "string")
    return { agent: detail.claimedBy };
  return null;
}

/**
 * The webhook payload's `data` for one event (issue #11): the organization, run, process and
 * version, `mode`, a link to the run, and as they apply the step, work item, assignee, `due` and
 * `overdue`, the state and outcome of `run.ended`, the event name of `event.held`/`event.consumed`.
 * Never run data, evidence or tokens.
 */
export function webhookData(
  event: DomainEventMessage,
  facts: RunFacts,
  publicUrl: string,
): Record<string, unknown> {
  const detail = event.detail ?? {};
  const data: Record<string, unknown> = {
    org: event.org,
    runId: event.runId,
    process: facts.process,
    version: facts.version,
    mode: event.mode,
  };
  if (event.stepId !== undefined) {
    data.stepId = event.stepId;
    if (facts.step) data.stepKind = facts.step.kind;
  }
  if (typeof detail.workItemId === "string") data.workItemId = detail.workItemId;
  const assignee = assigneeOf(event);
  if (assignee) data.assignee = assignee;
  const type = event.type as NotificationEventType;
  if (type === "step.overdue") {
    data.overdue = true;
    if (typeof detail.due === "string") data.due = detail.due;
  } else if ((type === "work_item.opened" || type === "step.ready") && facts.dueAt !== null) {
    data.due = iso(facts.dueAt);
    data.overdue = event.at >= facts.dueAt;
  }
  if (type === "run.ended") {
    data.state = typeof detail.state === "string" ? detail.state : null;
    data.outcome = typeof detail.outcome === "string" ? detail.outcome : null;
  }
  if ((type === "event.held" || type === "event.consumed") && typeof detail.name === "string") {
    data.event = detail.name;
  }
  data.link = runLink(publicUrl, event.runId);
  return data;
}

/** The webhook request body (Standard Webhooks' payload shape): `{ type, timestamp, data }`. */
export function webhookBody(type: string, at: number, data: Record<string, unknown>): string {
  return JSON.stringify({ type, timestamp: iso(at), data });
}

/** A rendered mail. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

function who(assignee: Assignee | null): string {
  if (!assignee) return "nobody in particular";
  if ("person" in assignee) return assignee.person;
  if ("group" in assignee) return `the group ${assignee.group}`;
  return `the agent ${assignee.agent}`;
}

const VERB: Record<string, string> = {
  approve: "Approval needed",
  task: "Task for you",
  agent: "Escalated step for you",
};

/**
 * The mail for `event` to `to` (issue #11: "each mail says what to do, by when, and the run"):
 * `work_item.opened` to its assignee, `step.overdue` to the assignee and the operators. Null for
 * other event types (they send no mail).
 */
export function mailFor(
  event: DomainEventMessage,
  facts: RunFacts,
  publicUrl: string,
  to: string,
): MailMessage | null {
  const step = event.stepId ?? "?";
  const what = facts.step?.instructions?.trim() || `Complete the step ${step}.`;
  const link = runLink(publicUrl, event.runId);
  const run = `run ${event.runId} of ${facts.process} (version ${facts.version})`;
  const indent = (text: string) =>
    text
      .split("\n")
      .map((l) => `  ${l}`)
      .join("\n");
  if (event.type === "work_item.opened") {
    const kind = typeof event.detail?.kind === "string" ? event.detail.kind : (facts.step?.kind ?? "task");
    const byWhen = facts.dueAt !== null ? iso(facts.dueAt) : "no deadline is set";
    return {
      to,
      subject: `[Baton] ${VERB[kind] ?? "Work for you"}: ${facts.process} / ${step}`,
      text: [
        `A work item is waiting for ${who(assigneeOf(event))} in the ${run}.`,
        "",
        `What to do (step ${step}):`,
        indent(what),
        "",
        `By when: ${byWhen}`,
        "",
        `The run: ${link}`,
        "Decide it in the web console, or with the decide tool (get_work lists it).",
        "",
        "-- Baton",
        "",
      ].join("\n"),
    };
  }
  if (event.type === "step.overdue") {
    const due = typeof event.detail?.due === "string" ? event.detail.due : iso(event.at);
    return {
      to,
      subject: `[Baton] Overdue: ${facts.process} / ${step} was due ${due}`,
      text: [
        `The step ${step} of the ${run} was due at ${due} and is not done.`,
        `It is with ${who(assigneeOf(event))}; this notice goes to them and to the organization's operators.`,
        "",
        "What to do:",
        indent(what),
        "",
        `By when: it was due at ${due}; do it now, or reassign or escalate it.`,
        "",
        `The run: ${link}`,
        "",
        "-- Baton",
        "",
      ].join("\n"),
    };
  }
  return null;
}
