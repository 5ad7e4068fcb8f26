/**
 * `baton webhook …` and `baton group email` (issue #11): the notifier's admin API as the CLI calls it,
 * and how each answer is printed.
 */
import type { DeliveryList, DeliveryView, GroupEmail, WebhookCreated, WebhookList } from "@baton/protocol";
import { adminCall as call } from "./admin-api.ts";

/** Where and as whom the CLI calls the admin API. */
export interface Target {
  baseUrl: string;
  bearer: string;
}

const target = (t: Target) => ({ baseUrl: t.baseUrl, token: t.bearer });

/** `POST /api/webhooks`: a new subscription and its secret (shown this once). */
export function addWebhook(
  t: Target,
  url: string,
  events: string[] | null,
  includeTestRuns: boolean,
): Promise<WebhookCreated> {
  return call<WebhookCreated>(target(t), {
    method: "POST",
    path: "/api/webhooks",
    body: { url, events, includeTestRuns },
  });
}

/** `GET /api/webhooks`. */
export function listWebhooks(t: Target): Promise<WebhookList> {
  return call<WebhookList>(target(t), { method: "GET", path: "/api/webhooks" });
}

/** `DELETE /api/webhooks/:id`. */
export function removeWebhook(t: Target, id: string): Promise<unknown> {
  return call(target(t), { method: "DELETE", path: `/api/webhooks/${encodeURIComponent(id)}` });
}

/** `GET /api/webhooks/:id/deliveries`, newest first. */
export function webhookDeliveries(t: Target, id: string, limit?: number): Promise<DeliveryList> {
  const query = limit === undefined ? "" : `?limit=${limit}`;
  return call<DeliveryList>(target(t), {
    method: "GET",
    path: `/api/webhooks/${encodeURIComponent(id)}/deliveries${query}`,
  });
}

/** `POST /api/deliveries/:id/redeliver`: a dead delivery is sent again. */
export function redeliver(t: Target, deliveryId: string): Promise<DeliveryView> {
  return call<DeliveryView>(target(t), {
    method: "POST",
    path: `/api/deliveries/${encodeURIComponent(deliveryId)}/redeliver`,
    body: {},
  });
}

/** `PUT /api/groups/:group/email`: a group's mailing address, or none (`null`). */
export function setGroupEmail(t: Target, group: string, address: string | null): Promise<GroupEmail> {
  return call<GroupEmail>(target(t), {
    method: "PUT",
    path: `/api/groups/${encodeURIComponent(group)}/email`,
    body: { address },
  });
}

/**
 * The lines `baton webhook deliveries` prints: each delivery (`<id> <type> <run> <state>`, the next
 * retry when one is due, the reason when suppressed or dead), then each attempt indented with its
 * time, status, response code and next retry.
 */
export function formatDeliveries(list: DeliveryList): string {
  const lines: string[] = [];
  for (const d of list.deliveries) {
    const next = d.nextAttemptAt ? ` next retry ${d.nextAttemptAt}` : "";
    const reason = d.reason ? ` (${d.reason})` : "";
    lines.push(`${d.id} ${d.type} ${d.runId} ${d.state}${next}${reason}`);
    for (const a of d.attempts) {
      const retry = a.nextRetryAt ? ` next retry ${a.nextRetryAt}` : "";
      const error = a.error && a.status !== "ok" ? ` ${a.error}` : "";
      lines.push(`  #${a.n} ${a.at} ${a.status} ${a.responseCode ?? "-"}${error}${retry}`);
    }
  }
  return lines.length === 0 ? "no deliveries yet" : lines.join("\n");
}

/** One line per subscription: `<id> <state> <url> events=<all|t1,t2> [include-test-runs]`. */
export function formatWebhooks(list: WebhookList): string {
  if (list.webhooks.length === 0) return "no webhooks";
  return list.webhooks
    .map(
      (w) =>
        `${w.id} ${w.state} ${w.url} events=${w.events ? w.events.join(",") : "all"}${w.includeTestRuns ? " include-test-runs" : ""}`,
    )
    .join("\n");
}
