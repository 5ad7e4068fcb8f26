import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { join } from "node:path";
import { eventsStream } from "@baton/bus";
import type { McpSession } from "@baton/conformance/mcp";
import { connect } from "nats";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DistributedDeployment, NATS_URL, REPO, startDistributed } from "../support/deploy.ts";
import { exited, until } from "../support/processes.ts";

/**
 * Issue #11 "Done when", distributed: three notifier replicas (`baton serve notifier`) over NATS and
 * PostgreSQL share one durable JetStream consumer. A stream of domain events with forced redeliveries
 * — a replica that records events but never acknowledges them (`BATON_NOTIFIER_FAULT=no-ack`), and a
 * replica killed with SIGKILL right after a webhook was answered, before it recorded it
 * (`kill-after-send`, the kill -9 of "mid-delivery") — reaches the receiver for every (event,
 * subscription); every attempt of one pair carries one `webhook-id`; the only duplicate the receiver
 * sees is the pair the killed replica sent; and PostgreSQL records exactly one delivery per pair,
 * with exactly one successful attempt.
 */

interface Hit {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

describe("notifier replicas — distributed (baton serve over NATS and PostgreSQL, issue #11)", () => {
  let baton: DistributedDeployment;
  let receiver: Server;
  let receiverUrl: string;
  let employee: McpSession;
  let db: pg.Client;
  let base: string;
  let operator: string;
  const hits: Hit[] = [];

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      let body = "";
      req.on("data", (c) => {
        body += c;
      });
      req.on("end", () => {
        hits.push({ path: req.url ?? "", headers: req.headers, body });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;
    baton = await startDistributed({
      env: {
        BATON_WEBHOOK_ALLOW_PRIVATE: "true",
        BATON_WEBHOOK_ALLOW_HTTP: "true",
        BATON_NOTIFIER_ACK_WAIT_MS: "1000",
        BATON_NOTIFIER_TIMEOUT_MS: "2000",
        BATON_NOTIFIER_HOLD_MS: "3000",
        BATON_NOTIFIER_POLL_MS: "200",
      },
    });
    base = baton.url.replace(/\/mcp$/, "");
    operator = await baton.token({ kind: "person", id: "ops@example.com", operator: true });
    await baton.publish(join(REPO, "fixtures/expense-approval"), { manager: "managers" });
    employee = await baton.session({ kind: "person", id: "sam@example.com" });
    db = new pg.Client({ connectionString: baton.databaseUrl });
    await db.connect();
  }, 240_000);

  afterAll(async () => {
    await employee?.close();
    await db?.end();
    await baton?.stop();
    await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
  });

  const subscribe = async (path: string) => {
    for (;;) {
      const response = await fetch(`${base}/api/webhooks`, {
        method: "POST",
        headers: { authorization: `Bearer ${operator}`, "content-type": "application/json" },
        body: JSON.stringify({ url: `${receiverUrl}${path}`, events: ["run.started", "step.ready"] }),
      });
      const body = (await response.json()) as { ok: boolean; data: { id: string }; error?: { code: string } };
      if (body.ok) return body.data.id;
      // No notifier serves yet (it is starting): the gateway says retry.
      if (body.error?.code !== "retry") throw new Error(JSON.stringify(body));
      await new Promise((r) => setTimeout(r, 300));
    }
  };
  const startRuns = async (n: number) => {
    for (let i = 0; i < n; i++)
      await employee.ok("start_run", {
        process: "expense-approval",
        inputs: {
          employee: "sam@example.com",
          amount: 10 + i,
          receiptUrl: "https://receipts.example.com/r/9",
        },
        requestId: crypto.randomUUID(),
      });
  };

  it("every (event, subscription) reaches the receiver with one webhook-id, and exactly one delivery is recorded per pair", async () => {
    // The replica that dies mid-delivery runs alone first, one attempt at a time, so its one
    // unrecorded attempt is the only one it made.
    const doomed = baton.serve("notifier", {
      BATON_REPLICA_ID: "doomed",
      BATON_NOTIFIER_FAULT: "kill-after-send",
      BATON_NOTIFIER_CONCURRENCY: "1",
    });
    const a = await subscribe("/a");
    const b = await subscribe("/b");
    await startRuns(3);
    expect(await exited(doomed, 60_000)).toBe("SIGKILL");
    expect(hits).toHaveLength(1);

    // A replica that records events but never acknowledges them reads the next ones alone, so
    // JetStream must offer those again to someone else.
    const recorded = async () =>
      (await db.query(`select count(*)::int as n from notification_events`)).rows[0].n as number;
    baton.serve("notifier", { BATON_REPLICA_ID: "no-ack", BATON_NOTIFIER_FAULT: "no-ack" });
    await startRuns(3);
    await until(
      async () => (await recorded()) === 12,
      "the no-ack replica records the events it reads",
      60_000,
    );
    // Three replicas from now on: the one that never acknowledges, and two that do.
    baton.serve("notifier", { BATON_REPLICA_ID: "steady-1" });
    baton.serve("notifier", { BATON_REPLICA_ID: "steady-2" });
    await startRuns(4);

    const events = async () =>
      (
        await db.query<{ id: string }>(
          `select id from outbox where subject like '%.run.started' or subject like '%.step.ready' order by id`,
        )
      ).rows.map((r) => Number(r.id));
    expect(await events()).toHaveLength(20);
    const pairs = (await events()).flatMap((id) => [`msg_${id}_${a}`, `msg_${id}_${b}`]);
    await until(async () => {
      const r = await db.query(
        `select count(*)::int as n from notification_deliveries where state = 'delivered' and channel = 'webhook'`,
      );
      return r.rows[0].n === pairs.length;
    }, "every pair recorded as delivered");

    // The receiver heard of every pair, each pair under one webhook-id, every attempt of it alike.
    const byId = new Map<string, Hit[]>();
    for (const h of hits) {
      const id = String(h.headers["webhook-id"]);
      byId.set(id, [...(byId.get(id) ?? []), h]);
    }
    expect([...byId.keys()].sort()).toEqual([...pairs].sort());
    const byBody = new Map<string, Set<string>>();
    for (const h of hits) {
      const key = `${h.path} ${h.body}`;
      byBody.set(key, (byBody.get(key) ?? new Set()).add(String(h.headers["webhook-id"])));
    }
    for (const ids of byBody.values()) expect(ids.size).toBe(1);
    // The only duplicate is the pair the killed replica sent before it could record it.
    const twice = [...byId].filter(([, list]) => list.length > 1);
    expect(twice).toHaveLength(1);
    expect((twice[0] as [string, Hit[]])[1]).toHaveLength(2);
    expect(hits).toHaveLength(pairs.length + 1);

    // PostgreSQL: one delivery per pair, exactly one successful attempt each, one event row per event.
    const deliveries = await db.query(
      `select d.event_id, d.destination, d.state,
         (select count(*)::int from notification_attempts t where t.delivery_id = d.id and t.status = 'ok') as ok
       from notification_deliveries d where d.channel = 'webhook'`,
    );
    expect(deliveries.rows).toHaveLength(pairs.length);
    for (const row of deliveries.rows) expect(row).toMatchObject({ state: "delivered", ok: 1 });
    const eventRows = await db.query(`select count(*)::int as n from notification_events`);
    expect(eventRows.rows[0].n).toBe(20);

    // JetStream does redeliver: the consumer delivers more messages than the stream holds events
    // (every message of the stream is an event the consumer's filter takes). Redelivery comes when
    // the no-ack replica's ack wait runs out, which may be after every pair was delivered (the
    // deliveries come from the recorded rows), so it is waited for, not assumed.
    const nc = await connect({ servers: NATS_URL });
    try {
      const jsm = await nc.jetstreamManager();
      const delivered = async () =>
        (await jsm.consumers.info(eventsStream(baton.namespace), "notifier")).delivered;
      await until(
        async () => (await delivered()).consumer_seq > 20,
        "JetStream redelivers the events the no-ack replica never acknowledged",
        60_000,
      );
      expect((await delivered()).stream_seq).toBe(20);
    } finally {
      await nc.close();
    }
  });
});
