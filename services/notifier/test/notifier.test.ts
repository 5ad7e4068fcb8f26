import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type EngineWrite, envelope, InProcessBus, type RegistryCall } from "@baton/bus";
import { ManualClock } from "@baton/clock";
import { type Database, openEmbedded } from "@baton/db";
import { silentLogger } from "@baton/kit";
import { type Identity, OFFERED_TOOLS, offeredProfiles } from "@baton/protocol";
import { simpleParser } from "mailparser";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testEngine } from "../../../test/support/in-process.ts";
import type { EngineService } from "../../engine/src/index.ts";
import { createRegistry } from "../../registry/src/index.ts";
import { createAdmin } from "../src/admin.ts";
import { NotifierSettingsSchema } from "../src/config.ts";
import { type NotifierService, startNotifier } from "../src/start.ts";
import type { Resolver } from "../src/targets.ts";

/**
 * The notifier in one process (issue #11), over embedded PostgreSQL, the in-process bus and a manual
 * clock, with the real engine writing the domain events and real HTTP receivers on loopback: the
 * admin refusals, retries on the injected clock, 410 Gone, a slow receiver beside a fast one, the
 * delivery-time address check (DNS rebinding), redelivery of a dead delivery, reading the outbox
 * again after a stop, and mail as `.eml` files.
 */

const T0 = Date.parse("2026-10-06T09:00:00Z");
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

const NOTIFY = `---
name: notify
description: A task for whoever started the run, with a deadline, then the managers approve.
steps:
  - id: write
    task: Write the summary of the quarter.
    person: initiator
    due: 1h
    next: approve
  - id: approve
    person: managers
    approve: Approve the summary.
    next: done
  - id: done
    finish: ok
---

# Notify
`;

const OPS: Identity = { org: "default", kind: "person", id: "ops@example.com", groups: [], operator: true };
const OTHER_ORG: Identity = { ...OPS, org: "elsewhere" };

// biome-ignore lint/suspicious/noExplicitAny: tests read reply shapes dynamically
type Data = any;

/** A webhook receiver on loopback that records every request and answers as told. */
interface Receiver {
  url: string;
  requests: { headers: IncomingMessage["headers"]; body: string }[];
  /** The next answers, in order; 200 once they are used up. */
  answers: number[];
  /** When set, requests are held until it is cleared. */
  hold: boolean;
  release(): void;
  close(): Promise<void>;
}

async function receiver(): Promise<Receiver> {
  const held: ServerResponse[] = [];
  const r: Receiver = {
    url: "",
    requests: [],
    answers: [],
    hold: false,
    release() {
      r.hold = false;
      for (const res of held.splice(0)) res.writeHead(200).end();
    },
    close: () =>
      new Promise<void>((resolve) => {
        r.release();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () => {
      r.requests.push({ headers: req.headers, body });
      if (r.hold) held.push(res);
      else res.writeHead(r.answers.shift() ?? 200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  r.url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}/hook`;
  return r;
}

/** Resolves once `check()` holds; rejects after `timeoutMs` saying what never happened. */
async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const settings = (extra: Record<string, string> = {}) =>
  NotifierSettingsSchema.parse({
    BATON_PUBLIC_URL: "http://baton.test",
    BATON_WEBHOOK_ALLOW_PRIVATE: "true",
    BATON_WEBHOOK_ALLOW_HTTP: "true",
    BATON_OPERATORS_EMAIL: "operators@example.com",
    BATON_NOTIFIER_RETRY_BASE_MS: String(MINUTE),
    BATON_NOTIFIER_POLL_MS: "50",
    BATON_NOTIFIER_TIMEOUT_MS: "5000",
    BATON_REPLICA_ID: "in-process",
    ...extra,
  });

describe("notifier in process (issue #11)", () => {
  let database: Database;
  let bus: InProcessBus;
  let clock: ManualClock;
  let engine: EngineService;
  let notifier: NotifierService;
  let mailDir: string;
  let seq = 0;

  const call = (payload: unknown, who: Identity = OPS) =>
    notifier.handle(envelope("notifier", who, payload, Date.now() + 10_000)) as Promise<Data>;
  const add = async (url: string, extra: Record<string, unknown> = {}) => {
    const r = await call({ op: "webhook_add", url, events: null, includeTestRuns: false, ...extra });
    expect(r.ok, JSON.stringify(r)).toBe(true);
    return r.data as { id: string; secret: string };
  };
  const start = async (mode: "live" | "test" = "live") => {
    seq += 1;
    const runId = `r_${"a".repeat(24)}${String.fromCharCode(97 + Math.floor(seq / 26))}${String.fromCharCode(97 + (seq % 26))}`;
    const write: EngineWrite = {
      tool: "start_run",
      runId,
      args: { process: "notify", inputs: {}, requestId: `start-${runId}`, mode },
    };
    const r = (await engine.write(envelope("test", OPS, write, Date.now() + 10_000))) as Data;
    expect(r.ok, JSON.stringify(r)).toBe(true);
    return runId;
  };
  const startMain = () =>
    startNotifier(settings(), {
      db: database.db,
      bus,
      clock,
      watchClock: (l) => clock.onChange(l),
      log: silentLogger,
      mailDir,
      random: () => 0.5,
    });
  const deliveries = async (runId: string) =>
    ((await call({ op: "run_deliveries", runId })).data as Data).deliveries as Data[];

  beforeAll(async () => {
    database = await openEmbedded("memory://");
    bus = new InProcessBus();
    clock = new ManualClock(T0);
    const registry = createRegistry({
      db: database.db,
      bus,
      clock,
      log: silentLogger,
      offers: { tools: OFFERED_TOOLS, profiles: offeredProfiles(false) },
    });
    const reg = async (payload: RegistryCall) =>
      (await registry.handle(envelope("registry", OPS, payload, Date.now() + 10_000) as never)) as Data;
    const imported = await reg({ op: "import", folderName: "notify", source: NOTIFY });
    await reg({ op: "bind", draftId: imported.data.draftId, bindings: { managers: "managers" } });
    const published = await reg({ op: "publish", draftId: imported.data.draftId });
    expect(published.ok, JSON.stringify(published)).toBe(true);
    engine = testEngine({ db: database.db, bus, clock });
    await engine.start();
    mailDir = mkdtempSync(join(process.env.BATON_TEST_TMP ?? tmpdir(), "notifier-mail-"));
    notifier = await startMain();
  });

  afterAll(async () => {
    await notifier?.stop();
    await engine?.stop();
    await bus?.close();
    await database?.close();
    rmSync(mailDir, { recursive: true, force: true });
  });

  it("refuses bad input with every issue, and another organization's subscription is not_found (issue #11)", async () => {
    const strict = createAdmin({
      db: database.db,
      clock,
      policy: { allowHttp: false, allowPrivate: false },
      resolver: async () => [{ address: "93.184.216.34", family: 4 }],
      giveUpMs: HOUR,
      wake: () => undefined,
    });
    const strictCall = (payload: unknown, who: Identity = OPS) =>
      strict(envelope("notifier", who, payload, Date.now() + 10_000)) as Promise<Data>;
    const refused = async (url: string, events: string[] | null = null) => {
      const r = await strictCall({ op: "webhook_add", url, events, includeTestRuns: false });
      expect(r.ok).toBe(false);
      expect(r.error.code).toBe("invalid");
      return r.error.issues as string[];
    };
    expect(await refused("hooks.example.com/baton")).toEqual([
      'url: "hooks.example.com/baton" is not a URL; give an absolute https:// URL',
    ]);
    expect(await refused("ftp://hooks.example.com/x")).toEqual([
      expect.stringMatching(/^url: ftp URLs are not allowed/),
    ]);
    expect(await refused("http://hooks.example.com/x")).toEqual([
      expect.stringMatching(/^url: http URLs are not allowed; use https/),
    ]);
    for (const url of [
      "https://127.0.0.1/x",
      "https://10.0.0.8/x",
      "https://169.254.169.254/latest",
      "https://[::1]/x",
    ])
      expect(await refused(url), url).toEqual([
        expect.stringMatching(/not a public one.*BATON_WEBHOOK_ALLOW_PRIVATE/),
      ]);
    expect(await refused("https://hooks.example.com/x", ["work_item.opened", "run.exploded"])).toEqual([
      expect.stringMatching(/^events\[1\]: unknown event type "run.exploded"; one of run.started, /),
    ]);
    expect(await refused("https://hooks.example.com/x", [])).toEqual([
      "events: name at least one event type, or leave it out for all",
    ]);
    const made = await strictCall({
      op: "webhook_add",
      url: "https://hooks.example.com/x",
      events: ["run.ended"],
      includeTestRuns: false,
    });
    expect(made.ok).toBe(true);
    expect(made.data.id).toMatch(/^wh_[a-z2-7]{20}$/);
    expect(made.data.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    for (const op of ["webhook_remove", "webhook_deliveries"]) {
      const r = await strictCall({ op, id: made.data.id }, OTHER_ORG);
      expect(r).toEqual({
        ok: false,
        error: { code: "not_found", message: `no webhook ${made.data.id} in this organization` },
      });
    }
    const listed = await strictCall({ op: "webhook_list" });
    const shown = listed.data.webhooks.find((w: Data) => w.id === made.data.id);
    expect(shown).toMatchObject({
      url: "https://hooks.example.com/x",
      events: ["run.ended"],
      state: "active",
    });
    expect(JSON.stringify(listed)).not.toContain(made.data.secret);
    expect((await strictCall({ op: "webhook_list" }, { ...OPS, operator: false })).error.code).toBe(
      "forbidden",
    );
    expect((await strictCall({ op: "webhook_remove", id: made.data.id })).ok).toBe(true);
    expect((await strictCall({ op: "webhook_list" })).data.webhooks.map((w: Data) => w.id)).not.toContain(
      made.data.id,
    );
  });

  it("signs each webhook, retries a failure on the injected clock with one webhook-id, and mails the assignee and operators (issue #11)", async () => {
    const r = await receiver();
    try {
      r.answers = [500, 500];
      const hook = await add(r.url, { events: ["work_item.opened", "step.overdue"] });
      const runId = await start();
      const openedOf = async () =>
        (await deliveries(runId)).find((d: Data) => d.type === "work_item.opened" && d.channel === "webhook");
      const recorded = (n: number) => async () => (await openedOf())?.attempts.length === n;
      await until(recorded(1), "the first attempt is recorded");
      const opened = await openedOf();
      expect(opened).toMatchObject({
        state: "pending",
        to: hook.id,
        attempts: [{ n: 1, status: "failed", responseCode: 500 }],
      });
      // Nothing more happens until the clock reaches the retry (equal jitter at 0.5: ¾ of a minute).
      expect(opened.nextAttemptAt).toBe(new Date(T0 + 45_000).toISOString());
      expect(r.requests).toHaveLength(1);
      clock.advance(MINUTE);
      await until(recorded(2), "the second attempt is recorded");
      clock.advance(2 * MINUTE);
      await until(recorded(3), "the third attempt is recorded");
      expect(r.requests).toHaveLength(3);
      await until(
        async () =>
          (await deliveries(runId)).some((d: Data) => d.id === opened.id && d.state === "delivered"),
        "delivered",
      );
      const ids = new Set(r.requests.map((q) => q.headers["webhook-id"]));
      expect(ids).toEqual(new Set([`msg_${opened.eventId}_${hook.id}`]));
      const wh = new Webhook(hook.secret);
      const last = r.requests[2] as Receiver["requests"][number];
      const payload = wh.verify(last.body, last.headers as Record<string, string>) as Data;
      expect(payload).toEqual({
        type: "work_item.opened",
        timestamp: new Date(T0).toISOString(),
        data: {
          org: "default",
          runId,
          process: "notify",
          version: 1,
          mode: "live",
          stepId: "write",
          stepKind: "task",
          workItemId: expect.stringMatching(/^w_/),
          assignee: { person: "ops@example.com" },
          due: new Date(T0 + HOUR).toISOString(),
          overdue: false,
          link: `http://baton.test/ui/#/runs/${runId}`,
        },
      });
      const after = (await deliveries(runId)).find((d: Data) => d.id === opened.id);
      expect(after.attempts.map((a: Data) => [a.status, a.responseCode])).toEqual([
        ["failed", 500],
        ["failed", 500],
        ["ok", 200],
      ]);
      // Overdue (§2.2 due): one webhook, mail to the assignee and to the operators' address.
      clock.advance(HOUR);
      await engine.write(
        envelope("tick", null, { tool: "tick", runId } satisfies EngineWrite, Date.now() + 10_000),
      );
      await until(
        () => r.requests.some((q) => JSON.parse(q.body).type === "step.overdue"),
        "the overdue webhook",
      );
      await until(
        async () =>
          (await deliveries(runId)).filter((d: Data) => d.channel === "mail" && d.state === "delivered")
            .length === 3,
        "three mails",
      );
      const mails = (await deliveries(runId)).filter((d: Data) => d.channel === "mail");
      expect(mails.map((d: Data) => [d.type, d.to]).sort()).toEqual([
        ["step.overdue", "operators@example.com"],
        ["step.overdue", "ops@example.com"],
        ["work_item.opened", "ops@example.com"],
      ]);
      const files = await Promise.all(
        readdirSync(mailDir).map((f) => simpleParser(readFileSync(join(mailDir, f)))),
      );
      const overdue = files.find(
        (m) => m.to && !Array.isArray(m.to) && m.to.text === "operators@example.com",
      );
      expect(overdue?.subject).toBe("[Baton] Overdue: notify / write was due 2026-10-06T10:00:00.000Z");
      expect(overdue?.text).toContain("Write the summary of the quarter.");
      expect(overdue?.text).toContain(`The run: http://baton.test/ui/#/runs/${runId}`);
    } finally {
      await r.close();
    }
  });

  it("a test run sends nothing real: only subscriptions made with includeTestRuns hear of it, the rest is suppressed (§3 test mode)", async () => {
    const plain = await receiver();
    const fleet = await receiver();
    try {
      const quiet = await add(plain.url, { events: ["run.started"] });
      const woken = await add(fleet.url, { events: ["run.started"], includeTestRuns: true });
      const runId = await start("test");
      await until(
        async () => (await deliveries(runId)).some((d: Data) => d.to === woken.id && d.state === "delivered"),
        "the fleet's receiver is woken",
      );
      const all = await deliveries(runId);
      const started = all.filter((d: Data) => d.type === "run.started");
      expect(started.find((d: Data) => d.to === woken.id)).toMatchObject({ state: "delivered" });
      expect(started.find((d: Data) => d.to === quiet.id)).toMatchObject({
        state: "suppressed",
        attempts: [],
        reason: expect.stringMatching(/^a test run \(§3 test mode\)/),
      });
      const mails = all.filter((d: Data) => d.channel === "mail");
      expect(mails.length).toBeGreaterThan(0);
      for (const m of mails) expect(m).toMatchObject({ state: "suppressed", attempts: [] });
      expect(JSON.parse((fleet.requests[0] as Data).body).data.mode).toBe("test");
      expect(plain.requests).toEqual([]);
      await call({ op: "webhook_remove", id: quiet.id });
      await call({ op: "webhook_remove", id: woken.id });
    } finally {
      await plain.close();
      await fleet.close();
    }
  });

  it("a slow receiver never delays another (issue #11)", async () => {
    const slow = await receiver();
    const fast = await receiver();
    try {
      slow.hold = true;
      const s = await add(slow.url, { events: ["run.started"] });
      const f = await add(fast.url, { events: ["run.started"] });
      for (let i = 0; i < 3; i++) await start();
      // The fast receiver hears of every run while the slow one still holds its first requests.
      await until(() => fast.requests.length === 3, "the fast receiver gets every event");
      await until(() => slow.requests.length >= 1, "the slow receiver got a request");
      slow.release();
      await until(
        async () =>
          ((await call({ op: "webhook_deliveries", id: s.id })).data.deliveries as Data[]).every(
            (d) => d.state === "delivered",
          ),
        "the slow receiver gets them all in the end",
      );
      for (const id of [s.id, f.id]) await call({ op: "webhook_remove", id });
    } finally {
      await Promise.all([slow.close(), fast.close()]);
    }
  });

  it("410 Gone disables the subscription, which then hears of nothing new (issue #11)", async () => {
    const gone = await receiver();
    try {
      gone.answers = [410];
      const g = await add(gone.url, { events: ["run.started"] });
      const first = await start();
      await until(
        async () =>
          (await call({ op: "webhook_list" })).data.webhooks.find((w: Data) => w.id === g.id)?.state ===
          "disabled",
        "the 410 receiver's subscription is disabled",
      );
      const d = (await deliveries(first)).find((x: Data) => x.to === g.id);
      expect(d).toMatchObject({
        state: "dead",
        reason: "the receiver answered 410 Gone; the subscription is disabled",
        attempts: [expect.objectContaining({ status: "gone", responseCode: 410, nextRetryAt: null })],
      });
      const later = await start();
      await until(async () => (await deliveries(later)).length > 0, "the next run's deliveries");
      expect((await deliveries(later)).some((x: Data) => x.to === g.id)).toBe(false);
      expect(gone.requests).toHaveLength(1);
      const again = await call({ op: "redeliver", deliveryId: d.id });
      expect(again.error.code).toBe("conflict");
      await call({ op: "webhook_remove", id: g.id });
    } finally {
      await gone.close();
    }
  });

  it("checks the address again at every delivery, so a name rebound to loopback is refused (issue #11 DNS rebinding)", async () => {
    const r = await receiver();
    const port = new URL(r.url).port;
    let answer = "93.184.216.34";
    const resolver: Resolver = async () => [{ address: answer, family: 4 }];
    // The only replica here, so no other (allowing private targets) sends it.
    await notifier.stop();
    const strictBus = new InProcessBus();
    const strict = await startNotifier(
      settings({ BATON_WEBHOOK_ALLOW_PRIVATE: "false", BATON_REPLICA_ID: "strict" }),
      {
        db: database.db,
        bus: strictBus,
        clock,
        log: silentLogger,
        resolver,
      },
    );
    try {
      const made = (await strict.handle(
        envelope(
          "notifier",
          OPS,
          {
            op: "webhook_add",
            url: `http://hooks.test:${port}/hook`,
            events: ["run.started"],
            includeTestRuns: false,
          },
          Date.now() + 10_000,
        ),
      )) as Data;
      expect(made.ok, JSON.stringify(made)).toBe(true);
      answer = "127.0.0.1";
      const runId = await start();
      await until(
        async () => (await deliveries(runId)).some((d: Data) => d.to === made.data.id && d.state === "dead"),
        "the rebound delivery is refused",
      );
      const d = (await deliveries(runId)).find((x: Data) => x.to === made.data.id);
      expect(d.attempts).toEqual([
        expect.objectContaining({
          status: "refused",
          responseCode: null,
          error:
            "hooks.test resolves to 127.0.0.1 is a loopback address, not a public one (BATON_WEBHOOK_ALLOW_PRIVATE is off)",
        }),
      ]);
      expect(r.requests).toEqual([]);
      await call({ op: "webhook_remove", id: made.data.id });
    } finally {
      await strict.stop();
      await strictBus.close();
      await r.close();
      notifier = await startMain();
    }
  });

  it("an operator sends a dead delivery again, with the same webhook-id (issue #11)", async () => {
    const r = await receiver();
    try {
      r.answers = [503, 503, 503, 503, 503, 503, 503, 503, 503, 503, 503, 503, 503, 503, 503, 503];
      const hook = await add(r.url, { events: ["run.started"] });
      const runId = await start();
      await until(() => r.requests.length === 1, "the first attempt");
      // Past the 24 hours of retries: the next attempt fails too, and then it is given up.
      clock.advance(25 * HOUR);
      await until(
        async () => (await deliveries(runId)).find((d: Data) => d.to === hook.id)?.state === "dead",
        "the delivery is dead",
      );
      const dead = (await deliveries(runId)).find((d: Data) => d.to === hook.id);
      expect(dead.reason).toMatch(/^gave up after \d+ attempts \(last: answered 503\)$/);
      expect((await call({ op: "redeliver", deliveryId: dead.id }, OTHER_ORG)).error.code).toBe("not_found");
      r.answers = [];
      const again = await call({ op: "redeliver", deliveryId: dead.id });
      expect(again.ok, JSON.stringify(again)).toBe(true);
      await until(
        async () => (await deliveries(runId)).find((d: Data) => d.id === dead.id)?.state === "delivered",
        "delivered on redelivery",
      );
      expect(new Set(r.requests.map((q) => q.headers["webhook-id"])).size).toBe(1);
      expect((await call({ op: "redeliver", deliveryId: dead.id })).error.code).toBe("conflict");
      await call({ op: "webhook_remove", id: hook.id });
    } finally {
      await r.close();
    }
  });

  it("reads what the outbox committed while it was stopped, and nothing twice (issue #11 baton dev)", async () => {
    const r = await receiver();
    try {
      const hook = await add(r.url, { events: ["run.started"] });
      await notifier.stop();
      const runId = await start();
      notifier = await startMain();
      await until(() => r.requests.length === 1, "the event committed while the notifier was stopped");
      expect(JSON.parse((r.requests[0] as Data).body).data.runId).toBe(runId);
      const again = await start();
      await until(() => r.requests.length === 2, "the next event");
      expect(JSON.parse((r.requests[1] as Data).body).data.runId).toBe(again);
      await call({ op: "webhook_remove", id: hook.id });
    } finally {
      await r.close();
    }
  });
});
