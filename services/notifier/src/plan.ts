// Who hears about one domain event (issue #11): its deliveries, decided once when the event is first read. Pure.
import { NOTIFICATION_EVENT_TYPES, type NotificationEventType } from "@baton/protocol";
import { type DomainEventMessage, type MailMessage, mailFor, type RunFacts } from "./payload.ts";

/** An active webhook subscription as the fan-out sees it. */
export interface SubscriptionTarget {
  id: string;
  /** Null: every type. */
  events: string[] | null;
  includeTestRuns: boolean;
  /** Epoch ms, injected clock. */
  createdAt: number;
}

/** What the fan-out needs to know about mail. */
export interface MailPlan {
  /** Whether mail can be sent at all (SMTP configured, or `.eml` files in `baton dev`). */
  enabled: boolean;
  /** `BATON_OPERATORS_EMAIL`: where operators are told of overdue work; null when unset. */
  operatorsEmail: string | null;
  /** The group id of the operators' queue, whose mailing address (if set) also hears of overdue work. */
  operatorGroup: string;
}

/** One delivery to create. */
export interface PlannedDelivery {
  /** `webhook:<subscription id>` or `mail:<address>`: unique per event. */
  destination: string;
  channel: "webhook" | "mail";
  subscriptionId: string | null;
  address: string | null;
  /** `suppressed`: recorded and never sent (a test run, §3 test mode). */
  state: "pending" | "suppressed";
  reason: string | null;
  message: MailMessage | null;
}

/** Whether `type` is one the notifier delivers. */
export function isNotified(type: string): type is NotificationEventType {
  return (NOTIFICATION_EVENT_TYPES as readonly string[]).includes(type);
}

const EMAIL = /^[^\s@]+@[^\s@]+$/;

const TEST_WEBHOOK =
  "a test run (§3 test mode): not sent; only subscriptions made with --include-test-runs get test runs' events";
const TEST_MAIL = "a test run (§3 test mode): no real mail is sent";

/**
 * The deliveries of one event:
 *
 * - a webhook for each active subscription that wants the event's type and existed when the event
 *   happened (a subscription hears what happens after it is made, however late the notifier reads);
 * - mail, when mail is enabled: `work_item.opened` to its assignee (a person's id is their email; a
 *   group's mailing address when it has one, else nobody), `step.overdue` to the assignee and the
 *   operators (`BATON_OPERATORS_EMAIL`, and the operator group's address when set). An agent is
 *   never mailed.
 *
 * A test run's deliveries are `suppressed`, except webhooks to subscriptions that include test runs
 * (§3 test mode: a test run sends no real notifications). Addresses are compared without case and
 * each is mailed once.
 *
 * Which deliveries an event has never depends on `facts`, only their messages do: the notifier
 * decides who hears of an event before it reads the event's facts, and reads no facts (and records
 * nothing) for an event nobody hears of (issue #15).
 */
export function planDeliveries(
  event: DomainEventMessage,
  facts: RunFacts,
  subscriptions: SubscriptionTarget[],
  groupEmails: ReadonlyMap<string, string>,
  mail: MailPlan,
  publicUrl: string,
): PlannedDelivery[] {
  if (!isNotified(event.type)) return [];
  const test = event.mode === "test";
  const out: PlannedDelivery[] = [];
  for (const s of subscriptions) {
    if (s.events !== null && !s.events.includes(event.type)) continue;
    if (s.createdAt > event.at) continue;
    const suppressed = test && !s.includeTestRuns;
    out.push({
      destination: `webhook:${s.id}`,
      channel: "webhook",
      subscriptionId: s.id,
      address: null,
      state: suppressed ? "suppressed" : "pending",
      reason: suppressed ? TEST_WEBHOOK : null,
      message: null,
    });
  }
  if (!mail.enabled) return out;
  const addresses: string[] = [];
  const add = (address: string | null | undefined) => {
    if (address && EMAIL.test(address) && !addresses.some((a) => a.toLowerCase() === address.toLowerCase()))
      addresses.push(address);
  };
  const assigned = event.detail?.assignedTo as { person?: unknown; group?: unknown } | null | undefined;
  if (event.type === "work_item.opened" || event.type === "step.overdue") {
    if (typeof assigned?.person === "string") add(assigned.person);
    if (typeof assigned?.group === "string") add(groupEmails.get(assigned.group));
  }
  if (event.type === "step.overdue") {
    add(mail.operatorsEmail);
    add(groupEmails.get(mail.operatorGroup));
  }
  for (const address of addresses) {
    const message = mailFor(event, facts, publicUrl, address);
    if (!message) continue;
    out.push({
      destination: `mail:${address.toLowerCase()}`,
      channel: "mail",
      subscriptionId: null,
      address,
      state: test ? "suppressed" : "pending",
      reason: test ? TEST_MAIL : null,
      message,
    });
  }
  return out;
}
