// The notifier's admin calls (issue #11): webhook subscriptions, group mailing addresses, deliveries.
import { randomBytes } from "node:crypto";
import type { Envelope } from "@baton/bus";
import type { Clock } from "@baton/clock";
import {
  type Db,
  groupEmails,
  notificationAttempts,
  notificationDeliveries,
  webhookSubscriptions,
} from "@baton/db";
import {
  type AttemptView,
  type DeliveryList,
  type DeliveryView,
  fail,
  type GroupEmail,
  NOTIFICATION_EVENT_TYPES,
  type NotificationEventType,
  NotifierCall,
  notifierCallRefusal,
  ok,
  protocolError,
  type ToolResult,
  type WebhookCreated,
  type WebhookList,
  type WebhookView,
} from "@baton/protocol";
import { and, desc, eq, inArray, ne, type SQL } from "drizzle-orm";
import { webhookIdOf } from "./deliveries.ts";
import { checkUrl, type Resolver, resolveTarget, type TargetPolicy } from "./targets.ts";

/** What the admin calls need. */
export interface AdminDeps {
  db: Db;
  clock: Clock;
  policy: TargetPolicy;
  resolver: Resolver;
  /** How long a delivery sent again by an operator is retried, ms. */
  giveUpMs: number;
  /** Called after a redelivery, so the loop sends it now. */
  wake: () => void;
}

const iso = (d: Date | null) => (d === null ? null : d.toISOString());
const BASE32 = "abcdefghijklmnopqrstuvwxyz234567";
const EMAIL = /^[^\s@<>(),;:"[\]]+@[^\s@<>(),;:"[\]]+\.[^\s@<>(),;:"[\]]+$/;

/** A new subscription id: `wh_` and 20 random base32 characters (100 bits). */
function newWebhookId(): string {
  const bytes = randomBytes(20);
  let id = "wh_";
  for (const b of bytes) id += BASE32[b & 31];
  return id;
}

/** A new Standard Webhooks secret: `whsec_` and 32 random bytes in base64. */
function newSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

type Sub = typeof webhookSubscriptions.$inferSelect;

function view(s: Sub): WebhookView {
  return {
    id: s.id,
    url: s.url,
    events: s.events as NotificationEventType[] | null,
    includeTestRuns: s.includeTestRuns,
    state: s.state as WebhookView["state"],
    createdBy: s.createdBy,
    createdAt: s.createdAt.toISOString(),
  };
}

/**
 * Serves the `notifier` subject (the admin API's notifier endpoints), for operators of the caller's
 * organization only. Another organization's subscription or delivery is `not_found`, like one that
 * does not exist. Bad input is `invalid` with every issue: a URL that is not one, another scheme, a
 * private address (unless `BATON_WEBHOOK_ALLOW_PRIVATE`), an unknown event type.
 */
export function createAdmin(deps: AdminDeps): (env: Envelope) => Promise<ToolResult<unknown>> {
  const { db, clock, policy, resolver } = deps;

  async function own(org: string, id: string): Promise<Sub | null> {
    const rows = await db
      .select()
      .from(webhookSubscriptions)
      .where(and(eq(webhookSubscriptions.id, id), eq(webhookSubscriptions.org, org)));
    return rows[0] ?? null;
  }

  const notFound = (id: string) => fail(protocolError("not_found", `no webhook ${id} in this organization`));

  async function deliveries(where: SQL | undefined, limit: number): Promise<ToolResult<DeliveryList>> {
    const rows = await db
      .select()
      .from(notificationDeliveries)
      .where(where)
      .orderBy(desc(notificationDeliveries.id))
      .limit(limit);
    const attempts =
      rows.length === 0
        ? []
        : await db
            .select()
            .from(notificationAttempts)
            .where(
              inArray(
                notificationAttempts.deliveryId,
                rows.map((r) => r.id),
              ),
            )
            .orderBy(notificationAttempts.deliveryId, notificationAttempts.n);
    const byDelivery = new Map<number, AttemptView[]>();
    for (const a of attempts) {
      const list = byDelivery.get(a.deliveryId) ?? [];
      list.push({
        n: a.n,
        at: a.at.toISOString(),
        status: a.status as AttemptView["status"],
        responseCode: a.responseCode,
        error: a.error,
        nextRetryAt: iso(a.nextRetryAt),
      });
      byDelivery.set(a.deliveryId, list);
    }
    return ok({ deliveries: rows.map((r) => deliveryView(r, byDelivery.get(r.id) ?? [])) });
  }

  function deliveryView(
    r: typeof notificationDeliveries.$inferSelect,
    attempts: AttemptView[],
  ): DeliveryView {
    return {
      id: r.id,
      eventId: r.eventId,
      type: r.type as NotificationEventType,
      runId: r.runId,
      channel: r.channel as DeliveryView["channel"],
      to: (r.channel === "webhook" ? r.subscriptionId : r.address) ?? "",
      webhookId:
        r.channel === "webhook" && r.subscriptionId ? webhookIdOf(r.eventId, r.subscriptionId) : null,
      state: r.state as DeliveryView["state"],
      reason: r.reason,
      nextAttemptAt: r.state === "pending" ? iso(r.nextAttemptAt) : null,
      createdAt: r.createdAt.toISOString(),
      deliveredAt: iso(r.deliveredAt),
      attempts,
    };
  }

  async function add(
    org: string,
    by: string,
    p: Extract<NotifierCall, { op: "webhook_add" }>,
  ): Promise<ToolResult<WebhookCreated>> {
    const issues: string[] = [];
    const checked = checkUrl(p.url, policy);
    if ("problem" in checked) issues.push(`url: ${checked.problem}`);
    else {
      const target = await resolveTarget(checked.host, policy, resolver);
      if ("problem" in target) issues.push(`url: ${target.problem}`);
    }
    if (p.events !== null) {
      if (p.events.length === 0) issues.push("events: name at least one event type, or leave it out for all");
      p.events.forEach((t, i) => {
        if (!(NOTIFICATION_EVENT_TYPES as readonly string[]).includes(t))
          issues.push(
            `events[${i}]: unknown event type ${JSON.stringify(t)}; one of ${NOTIFICATION_EVENT_TYPES.join(", ")}`,
          );
      });
    }
    if (issues.length > 0) return fail(protocolError("invalid", "the webhook cannot be made", issues));
    const row: Sub = {
      id: newWebhookId(),
      org,
      url: (checked as { url: URL }).url.toString(),
      events: p.events === null ? null : [...new Set(p.events)],
      includeTestRuns: p.includeTestRuns,
      secret: newSecret(),
      state: "active",
      createdBy: by,
      createdAt: new Date(clock.now()),
      endedAt: null,
    };
    await db.insert(webhookSubscriptions).values(row);
    return ok({ ...view(row), secret: row.secret });
  }

  async function handle(call: NotifierCall, org: string, by: string): Promise<ToolResult<unknown>> {
    switch (call.op) {
      case "webhook_add":
        return add(org, by, call);
      case "webhook_list": {
        const rows = await db
          .select()
          .from(webhookSubscriptions)
          .where(and(eq(webhookSubscriptions.org, org), ne(webhookSubscriptions.state, "removed")))
          .orderBy(webhookSubscriptions.createdAt, webhookSubscriptions.id);
        return ok({ webhooks: rows.map(view) } satisfies WebhookList);
      }
      case "webhook_remove": {
        const sub = await own(org, call.id);
        if (!sub || sub.state === "removed") return notFound(call.id);
        const now = new Date(clock.now());
        await db.transaction(async (tx) => {
          // The secret goes with it: nothing can sign for this subscription again.
          await tx
            .update(webhookSubscriptions)
            .set({ state: "removed", secret: "", endedAt: now })
            .where(eq(webhookSubscriptions.id, sub.id));
          await tx
            .update(notificationDeliveries)
            .set({ state: "cancelled", nextAttemptAt: null, reason: "the subscription was removed" })
            .where(
              and(
                eq(notificationDeliveries.subscriptionId, sub.id),
                eq(notificationDeliveries.state, "pending"),
              ),
            );
        });
        return ok(view({ ...sub, state: "removed" }));
      }
      case "webhook_deliveries": {
        const sub = await own(org, call.id);
        if (!sub) return notFound(call.id);
        return deliveries(
          and(eq(notificationDeliveries.org, org), eq(notificationDeliveries.subscriptionId, sub.id)),
          call.limit ?? 50,
        );
      }
      case "run_deliveries":
        return deliveries(
          and(eq(notificationDeliveries.org, org), eq(notificationDeliveries.runId, call.runId)),
          500,
        );
      case "redeliver": {
        const rows = await db
          .select()
          .from(notificationDeliveries)
          .where(and(eq(notificationDeliveries.id, call.deliveryId), eq(notificationDeliveries.org, org)));
        const d = rows[0];
        if (!d)
          return fail(protocolError("not_found", `no delivery ${call.deliveryId} in this organization`));
        if (d.state !== "dead")
          return fail(
            protocolError("conflict", `only a dead delivery is sent again; delivery ${d.id} is ${d.state}`),
          );
        if (d.subscriptionId) {
          const sub = await own(org, d.subscriptionId);
          if (sub?.state !== "active")
            return fail(
              protocolError(
                "conflict",
                `the webhook ${d.subscriptionId} is ${sub?.state ?? "gone"}; make a new subscription to receive events again`,
              ),
            );
        }
        const now = new Date(clock.now());
        const updated = await db
          .update(notificationDeliveries)
          .set({
            state: "pending",
            nextAttemptAt: now,
            giveUpAt: new Date(now.getTime() + deps.giveUpMs),
            reason: null,
          })
          .where(and(eq(notificationDeliveries.id, d.id), eq(notificationDeliveries.state, "dead")))
          .returning();
        const row = updated[0];
        if (!row) return fail(protocolError("conflict", `delivery ${d.id} changed meanwhile; read it again`));
        deps.wake();
        const attempts = await deliveries(eq(notificationDeliveries.id, row.id), 1);
        return attempts.ok ? ok(attempts.data.deliveries[0]) : attempts;
      }
      case "group_email": {
        if (call.address !== null && !EMAIL.test(call.address))
          return fail(
            protocolError("invalid", "the group's mailing address is not an email address", [
              `address: ${JSON.stringify(call.address)} is not an email address`,
            ]),
          );
        if (call.address === null) {
          await db
            .delete(groupEmails)
            .where(and(eq(groupEmails.org, org), eq(groupEmails.groupId, call.group)));
        } else {
          const values = {
            org,
            groupId: call.group,
            address: call.address,
            updatedBy: by,
            updatedAt: new Date(clock.now()),
          };
          await db
            .insert(groupEmails)
            .values(values)
            .onConflictDoUpdate({
              target: [groupEmails.org, groupEmails.groupId],
              set: { address: values.address, updatedBy: by, updatedAt: values.updatedAt },
            });
        }
        return ok({ group: call.group, address: call.address } satisfies GroupEmail);
      }
      case "group_emails": {
        const rows = await db
          .select({ group: groupEmails.groupId, address: groupEmails.address })
          .from(groupEmails)
          .where(eq(groupEmails.org, org))
          .orderBy(groupEmails.groupId);
        return ok({ groups: rows });
      }
      default: {
        const unreachable: never = call;
        return fail(protocolError("invalid", `unknown notifier call ${JSON.stringify(unreachable)}`));
      }
    }
  }

  return async (env) => {
    const who = env.identity;
    if (!who?.operator) return fail(protocolError("forbidden", "webhooks and group mail are for operators"));
    const parsed = NotifierCall.safeParse(env.payload);
    if (!parsed.success) {
      return fail(notifierCallRefusal(parsed.error.issues));
    }
    return handle(parsed.data, who.org, who.id);
  };
}
