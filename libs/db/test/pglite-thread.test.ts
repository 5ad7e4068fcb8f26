import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { PGlite } from "@electric-sql/pglite";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Database, openEmbedded, rowsOf } from "../src/connect.ts";
import { PGliteThread } from "../src/pglite-thread.ts";

/**
 * `baton dev`'s PGlite on a worker thread (issue #15): the services see the same rows, values,
 * errors and transactions as with PGlite on their own event loop, and the thread never keeps a
 * process alive that has nothing left to ask it.
 */
describe("PGlite on a worker thread (issue #15)", () => {
  let database: Database;
  let direct: PGlite;

  beforeAll(async () => {
    database = await openEmbedded("memory://");
    direct = await PGlite.create("memory://");
  });
  afterAll(async () => {
    await database?.close();
    await direct?.close();
  });

  it("answers a statement with the rows and values PGlite gives on the main thread", async () => {
    const statement =
      "select '2026-12-03 10:00:00.5+00'::timestamptz as at, 12::bigint as n, '{\"a\":[1,\"x\"]}'::jsonb as j, null::text as t, true as b, 'é'::text as s";
    const keepTimestamps = { 1184: (v: string) => v };
    const [threaded, onMain] = await Promise.all([
      // Through drizzle, which asks for timestamps as text (its parsers), as every service does.
      database.db.execute(sql.raw(statement)),
      direct.query(statement, [], { parsers: keepTimestamps }),
    ]);
    expect(rowsOf(threaded)).toEqual(onMain.rows);
    expect(rowsOf<{ at: unknown }>(threaded)[0]?.at).toBe("2026-12-03 10:00:00.5+00");
  });

  it("rejects with the database's own error fields: SQLSTATE, severity and detail (baton_commit's BT409 reads the same)", async () => {
    const statement =
      "do $$ begin raise exception 'baton: run r1 changed since it was read' using errcode = 'BT409', detail = 'rev 3'; end $$";
    const onMain = (await direct.exec(statement).catch((e: unknown) => e)) as Record<string, unknown>;
    const threaded = await database.db.execute(sql.raw(statement)).catch((e: unknown) => e);
    let cause = threaded as Record<string, unknown> | undefined;
    while (cause && typeof cause.code !== "string")
      cause = cause.cause as Record<string, unknown> | undefined;
    expect(cause).toMatchObject({
      code: "BT409",
      severity: "ERROR",
      detail: "rev 3",
      message: "baton: run r1 changed since it was read",
    });
    expect(cause?.code).toBe(onMain.code);
    expect(cause?.severity).toBe(onMain.severity);
  });

  it("commits a transaction, rolls it back on a throw, on a failed statement and on rollback()", async () => {
    const { db } = database;
    await db.execute(sql`create table tx_probe (x int primary key)`);
    expect(
      await db.transaction(async (tx) => tx.execute(sql`insert into tx_probe values (1)`).then(() => 7)),
    ).toBe(7);
    await expect(
      db.transaction(async (tx) => {
        await tx.execute(sql`insert into tx_probe values (2)`);
        throw new Error("the caller changed its mind");
      }),
    ).rejects.toThrow("the caller changed its mind");
    await expect(
      db.transaction(async (tx) => {
        await tx.execute(sql`insert into tx_probe values (3)`);
        await tx.execute(sql`insert into tx_probe values (1)`);
      }),
    ).rejects.toMatchObject({ cause: { code: "23505" } });
    await expect(
      db.transaction(async (tx) => {
        await tx.execute(sql`insert into tx_probe values (4)`);
        tx.rollback();
      }),
    ).rejects.toThrow();
    expect(rowsOf(await db.execute(sql`select x from tx_probe order by x`))).toEqual([{ x: 1 }]);
  });

  it("runs a statement sent while a transaction is open after that transaction, as PGlite's one session does", async () => {
    const { db } = database;
    await db.execute(sql`create table order_probe (x int)`);
    let outside: Promise<unknown> | undefined;
    await db.transaction(async (tx) => {
      await tx.execute(sql`insert into order_probe values (1)`);
      outside = db.execute(sql`select count(*)::int as n from order_probe`);
      // Give the outside statement every chance to overtake: it must still wait for the commit.
      await new Promise((resolve) => setTimeout(resolve, 50));
      await tx.execute(sql`insert into order_probe values (2)`);
    });
    expect(rowsOf(await (outside as Promise<unknown>))).toEqual([{ n: 2 }]);
  });

  it("refuses calls after close, saying the embedded database is closed", async () => {
    const thread = await PGliteThread.create("memory://");
    await thread.close();
    await expect(thread.query("select 1")).rejects.toThrow("the embedded database is closed");
  });

  it("tells its owner once when the thread stops before close, and every waiting and later call says why", async () => {
    const stops: string[] = [];
    const thread = await PGliteThread.create("memory://", (reason) => stops.push(reason.message));
    const waiting = thread.query("select pg_sleep(5)");
    // What a WebAssembly abort does to the thread, from outside: it ends without close.
    await (thread as unknown as { worker: { terminate(): Promise<number> } }).worker.terminate();
    await expect(waiting).rejects.toThrow(/the embedded database stopped/);
    await expect(thread.query("select 1")).rejects.toThrow(/the embedded database stopped/);
    expect(stops).toEqual([expect.stringMatching(/the embedded database stopped/)]);
    await thread.close();
    expect(stops).toHaveLength(1);
  });

  it("says nothing to its owner when closed", async () => {
    const stops: string[] = [];
    const thread = await PGliteThread.create("memory://", (reason) => stops.push(reason.message));
    await thread.close();
    expect(stops).toEqual([]);
  });

  it("refuses a parameter that cannot cross to the thread and keeps answering the next call", async () => {
    const thread = await PGliteThread.create("memory://");
    try {
      await expect(thread.query("select $1::text as x", [() => 1])).rejects.toMatchObject({
        name: "DataCloneError",
      });
      await expect(thread.query("select 1 as one")).resolves.toMatchObject({ rows: [{ one: 1 }] });
    } finally {
      await thread.close();
    }
  });

  it("says why a database cannot be opened (a data directory under a file)", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "baton-pglite-")), "not-a-directory");
    writeFileSync(file, "");
    await expect(PGliteThread.create(join(file, "pgdata"))).rejects.toMatchObject({ code: "ENOTDIR" });
  });

  it("lets a process that never closes it exit once nothing waits for it, a refused parameter included", () => {
    const connect = fileURLToPath(new URL("../src/connect.ts", import.meta.url));
    const thread = fileURLToPath(new URL("../src/pglite-thread.ts", import.meta.url));
    const program = `const { openEmbedded, pingDatabase } = await import(${JSON.stringify(connect)});
      const { PGliteThread } = await import(${JSON.stringify(thread)});
      const d = await openEmbedded("memory://");
      await pingDatabase(d.db);
      const t = await PGliteThread.create("memory://");
      await t.query("select $1::text", [() => 1]).catch(() => undefined);
      await t.query("select 1");
      console.log("asked");`;
    const child = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", program], {
      encoding: "utf8",
      timeout: 120_000,
    });
    expect(child.stderr).toBe("");
    expect(child.stdout.trim()).toBe("asked");
    expect(child.status).toBe(0);
  });
});
