import { z } from "zod";
import { type ProtocolError, protocolError } from "./errors.ts";

/**
 * The notifier's admin shapes (issue #11): webhook subscriptions, group mailing addresses and the
 * record of deliveries, served on the bus subject `notifier` and by the admin API under `/api`
 * (operators of the organization only; another organization's subscription or delivery is
 * `not_found`). Every answer is the protocol's `{ ok, data | error }`.
 */

/**
 * The domain event types a webhook can subscribe to, and that the notifier delivers: the engine's
 * outbox events people and agent fleets act on (issue #11). A subscription without a list gets all.
 */
export const NOTIFICATION_EVENT_TYPES = [
  "run.started",
  "run.ended",
  "step.ready",
  "step.completed",
  "step.overdue",
  "work_item.opened",
  "event.held",
  "event.consumed",
] as const;
export type NotificationEventType = (typeof NOTIFICATION_EVENT_TYPES)[number];

/** A webhook subscription id: `wh_` and 20 base32 characters. */
export const WEBHOOK_ID_PATTERN = /^wh_[a-z2-7]{20}$/;

const webhookId = z.string().min(1).max(64);

/** One call on the `notifier` subject (the admin API's notifier endpoints). */
export const NotifierCall = z.discriminatedUnion("op", [
  /**
   * `POST /api/webhooks {url, events?, includeTestRuns?}`: a new subscription. `events` null or absent:
   * every type of {@link NOTIFICATION_EVENT_TYPES}. Replies {@link WebhookCreated}, the only time the
   * secret is shown.
   */
  z.strictObject({
    op: z.literal("webhook_add"),
    url: z.string().max(2048),
    events: z.array(z.string().max(64)).max(32).nullable(),
    includeTestRuns: z.boolean(),
  }),
  /** `GET /api/webhooks`: the organization's subscriptions, oldest first ({@link WebhookList}). */
  z.strictObject({ op: z.literal("webhook_list") }),
  /** `DELETE /api/webhooks/:id`: removes it; its pending deliveries are cancelled ({@link WebhookView}). */
  z.strictObject({ op: z.literal("webhook_remove"), id: webhookId }),
  /** `GET /api/webhooks/:id/deliveries?limit=`: its deliveries, newest first, with every attempt ({@link DeliveryList}). */
  z.strictObject({
    op: z.literal("webhook_deliveries"),
    id: webhookId,
    limit: z.int().min(1).max(500).optional(),
  }),
  /** `GET /api/runs/:id/deliveries`: every delivery (webhook and mail) of one run's events ({@link DeliveryList}). */
  z.strictObject({ op: z.literal("run_deliveries"), runId: z.string().min(1).max(64) }),
  /** `POST /api/deliveries/:id/redeliver`: a dead delivery is sent again, with the same `webhook-id` ({@link DeliveryView}). */
  z.strictObject({ op: z.literal("redeliver"), deliveryId: z.int().min(1) }),
  /** `PUT /api/groups/:group/email {address}`: a group's mailing address; null removes it ({@link GroupEmail}). */
  z.strictObject({
    op: z.literal("group_email"),
    group: z.string().min(1).max(200),
    address: z.string().max(320).nullable(),
  }),
  /** `GET /api/groups/emails`: every group's mailing address ({@link GroupEmail}[] under `groups`). */
  z.strictObject({ op: z.literal("group_emails") }),
]);
export type NotifierCall = z.infer<typeof NotifierCall>;

/**
 * What a call that breaks {@link NotifierCall} is answered with: `invalid`, one issue per problem
 * (`path: message`), as the gateway checks it at the edge and the notifier's own entry point does.
 */
export function notifierCallRefusal(issues: readonly z.core.$ZodIssue[]): ProtocolError {
  return protocolError(
    "invalid",
    "the notifier call does not match its schema",
    issues.map((i) => `${i.path.join(".") || "payload"}: ${i.message}`),
  );
}

/** A subscription as the admin API shows it: never its secret. */
export interface WebhookView {
  id: string;
  url: string;
  /** The event types it gets; null: all. */
  events: NotificationEventType[] | null;
  /** Whether test runs' events reach it too (§3 test mode: otherwise they are suppressed). */
  includeTestRuns: boolean;
  /** `active`, `disabled` (the receiver answered 410 Gone) or `removed`. */
  state: "active" | "disabled" | "removed";
  createdBy: string;
  /** RFC 3339. */
  createdAt: string;
}

/** The answer to `webhook_add`: the subscription and its Standard Webhooks secret (`whsec_…`), shown once. */
export interface WebhookCreated extends WebhookView {
  secret: string;
}

/** `GET /api/webhooks`. */
export interface WebhookList {
  webhooks: WebhookView[];
}

/** One attempt of a delivery. */
export interface AttemptView {
  /** 1, 2, … */
  n: number;
  /** RFC 3339, on the server's clock. */
  at: string;
  /** `ok`, `failed`, `gone` (410: the subscription was disabled) or `refused` (a forbidden address). */
  status: "ok" | "failed" | "gone" | "refused";
  /** The HTTP status or SMTP reply code; null when no answer came (time-out, refused connection). */
  responseCode: number | null;
  error: string | null;
  /** When the next attempt is due, RFC 3339; null when none follows. */
  nextRetryAt: string | null;
}

/** One delivery: one (event, destination) pair, whatever the bus did. */
export interface DeliveryView {
  id: number;
  /** The domain event's id (its outbox row). */
  eventId: number;
  type: NotificationEventType;
  runId: string;
  channel: "webhook" | "mail";
  /** The subscription id for a webhook, the address for a mail. */
  to: string;
  /** The `webhook-id` header every attempt carries (webhooks only). */
  webhookId: string | null;
  state: "pending" | "delivered" | "dead" | "suppressed" | "cancelled";
  /** Why it is suppressed, dead or cancelled. */
  reason: string | null;
  /** When the next attempt is due (pending only), RFC 3339. */
  nextAttemptAt: string | null;
  createdAt: string;
  deliveredAt: string | null;
  attempts: AttemptView[];
}

/** A page of deliveries, newest first. */
export interface DeliveryList {
  deliveries: DeliveryView[];
}

/** A group's mailing address. */
export interface GroupEmail {
  group: string;
  /** Null when removed. */
  address: string | null;
}
