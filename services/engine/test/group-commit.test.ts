import { randomBytes } from "node:crypto";
import { connectPostgres, type Database, migratePostgres, openEmbedded, rowsOf } from "@baton/db";
import { type PublishedProcess, type Run, startRun } from "@baton/engine";
import { sql } from "drizzle-orm";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DRAFTING } from "../../../libs/engine/src/test-processes.ts";
import { CONFIG, person, T0 } from "../../../libs/engine/src/test-support.ts";
import { POSTGRES_URL } from "../../../test/support/deploy.ts";
import { EngineStore, FenceLost, IdempotencyConflict, type Transition } from "../src/store.ts";

/**
 * Group commit (issue #15): transitions made in one event-loop iteration, and those that queue
 * while a commit is in flight, share one statement and one commit, and each still gets its own
 * outcome — a lost fence, a taken `requestId` or an SQL error in one never changes another's
 * (ARCHITECTURE rule 2, §4). With transitions made by the real core, against a scratch database on
 * the machine's PostgreSQL (`baton serve`) and against PGlite in memory (`baton dev`, where PGlite
 * runs on a worker thread and its errors reach `statementRefused` in PGlite's shape).
 */
describe.each([
  ["PostgreSQL", "postgres"],
  ["PGlite", "pglite"],
] as const)(
  "group commit on %s: one statement for the transitions that queued, each with its own outcome (issue #15)",
  (_label, kind) => {
    let database: Database;
    let name: string | undefined;
    const editor = person("ed@example.com", ["editor"]);
    const def: PublishedProcess = { ...DRAFTING, org: editor.org };

    beforeAll(async () => {
      if (kind === "pglite") {
        database = await openEmbedded("memory://");
        return;
      }
      name = `baton_gc_${randomBytes(4).toString("hex")}`;
      const admin = new pg.Client({ connectionString: POSTGRES_URL });
      await admin.connect();
      await admin.query(`create database ${name}`);
      await admin.end();
      const url = POSTGRES_URL.replace(/\/[^/]*$/, `/${name}`);
      await migratePostgres(url);
      database = await connectPostgres(url);
    }, 60_000);
    afterAll(async () => {
      await database?.close();
      if (!name) return;
      const admin = new pg.Client({ connectionString: POSTGRES_URL });
      await admin.connect();
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    });

    /** A new run's start as the engine commits it, with the idempotency record of `requestId`. */
    function start(runId: string, requestId = `req-${runId}`): Transition {
      const outcome = startRun(
        { runId, inputs: {}, mode: "live" },
        { actor: editor, now: T0, def, config: CONFIG },
      );
      if (!("run" in outcome)) throw new Error("the core refused the start");
      const after: Run = { ...outcome.run, rev: 1 };
      return {
        before: null,
        after,
        def,
        journal: { actor: editor.id, actorKind: "person", command: "start_run", requestId, detail: {} },
        idempotency: {
          requestId,
          tool: "start_run",
          fingerprint: "f",
          result: { ok: true, data: { runId } },
        },
        events: outcome.events,
        partitions: 16,
      };
    }

    const outcomeOf = (p: Promise<void>) =>
      p.then(
        () => "ok",
        (e: unknown) =>
          e instanceof FenceLost
            ? "fence"
            : e instanceof IdempotencyConflict
              ? "idempotency_conflict"
              : `error ${e}`,
      );

    /** The `n` of a `select count(*) as n …` (committed rows, read on the store's own database). */
    async function count(query: string): Promise<number> {
      return Number(rowsOf<{ n: unknown }>(await database.db.execute(sql.raw(query)))[0]?.n);
    }

    it("twenty transitions made in one event-loop iteration: one statement at the iteration's end, every one applied", async () => {
      const store = new EngineStore(database.db);
      const outcomes = await Promise.all(
        Array.from({ length: 20 }, (_, i) => outcomeOf(store.commit(start(`r_many_${i}`)))),
      );
      expect(outcomes).toEqual(Array(20).fill("ok"));
      expect(store.sent).toEqual({ statements: 1, transitions: 20 });
      expect(await count("select count(*) as n from runs where id like 'r_many_%'")).toBe(20);
      expect(await count("select count(*) as n from run_journal where run_id like 'r_many_%'")).toBe(20);
    });

    it("transitions made while a commit is in flight queue behind it and go together in the next statement", async () => {
      const store = new EngineStore(database.db);
      const head = outcomeOf(store.commit(start("r_inflight_head")));
      // This callback runs in the same check phase, after the store's: its statement is sent and its
      // answer cannot be read before the next poll phase, so the nineteen below find it in flight.
      await new Promise((resolve) => setImmediate(resolve));
      expect(store.sent).toEqual({ statements: 1, transitions: 1 });
      const queued = Array.from({ length: 19 }, (_, i) => outcomeOf(store.commit(start(`r_inflight_${i}`))));
      expect(await Promise.all([head, ...queued])).toEqual(Array(20).fill("ok"));
      expect(store.sent).toEqual({ statements: 2, transitions: 20 });
      expect(await count("select count(*) as n from runs where id like 'r_inflight_%'")).toBe(20);
    });

    it("in one statement, a lost fence and a taken requestId refuse only their own transition, writing nothing of it", async () => {
      const store = new EngineStore(database.db);
      const first = start("r_fenced");
      await store.commit(first);
      // A stale writer: it read the run at rev 0, which is no longer current (rev 1 is committed).
      const stale: Transition = {
        ...start("r_fenced", "req-stale"),
        before: { ...first.after, rev: 0 },
        after: { ...first.after, rev: 1 },
      };
      const outcomes = await Promise.all([
        outcomeOf(store.commit(start("r_head"))),
        outcomeOf(store.commit(start("r_good_1", "req-shared"))),
        outcomeOf(store.commit(stale)),
        outcomeOf(store.commit(start("r_dup", "req-shared"))),
        outcomeOf(store.commit(start("r_good_2"))),
      ]);
      expect(outcomes).toEqual(["ok", "ok", "fence", "idempotency_conflict", "ok"]);
      // r_fenced's own statement, then the five of this iteration in one.
      expect(store.sent).toEqual({ statements: 2, transitions: 6 });
      // The fenced transition's idempotency record and the conflicting one's run were never written.
      expect(await count("select count(*) as n from idempotency where request_id = 'req-stale'")).toBe(0);
      expect(await count("select count(*) as n from runs where id = 'r_dup'")).toBe(0);
      expect(
        await count("select count(*) as n from runs where id in ('r_good_1', 'r_good_2', 'r_head')"),
      ).toBe(3);
    });

    it("an SQL error in one transition of a statement fails that transition only: the others are applied alone", async () => {
      const store = new EngineStore(database.db);
      const broken = start("r_broken");
      // run_journal.actor is NOT NULL: this transition's statement fails in PostgreSQL.
      broken.journal = { ...broken.journal, actor: null as unknown as string };
      const outcomes = await Promise.all([
        outcomeOf(store.commit(start("r_first"))),
        outcomeOf(store.commit(start("r_peer_1"))),
        outcomeOf(store.commit(broken)),
        outcomeOf(store.commit(start("r_peer_2"))),
      ]);
      expect(outcomes[0]).toBe("ok");
      expect(outcomes[1]).toBe("ok");
      expect(outcomes[2]).toMatch(/^error .*null value in column "actor"/);
      expect(outcomes[3]).toBe("ok");
      expect(await count("select count(*) as n from runs where id in ('r_peer_1', 'r_peer_2')")).toBe(2);
      expect(await count("select count(*) as n from runs where id = 'r_broken'")).toBe(0);
    });
  },
);
