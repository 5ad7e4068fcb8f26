import { execFile } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import { join } from "node:path";
import { promisify } from "node:util";
import type { McpSession } from "@baton/conformance/mcp";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { objectLockKey } from "../../services/evidence/src/index.ts";
import { HOUR, TestClock } from "../support/clock.ts";
import { type DistributedDeployment, REPO, startDistributed } from "../support/deploy.ts";
import type { S3Server } from "../support/s3.ts";

const run = promisify(execFile);
const CLI = join(REPO, "services/cli/src/main.ts");
const sha = (text: string) => createHash("sha256").update(text).digest("hex");
const b64 = (text: string) => Buffer.from(text).toString("base64");

/**
 * Issue #10 "Orphans": `baton evidence gc --older-than <age>` removes stored objects no file record
 * names, older than the age, unless an upload intent younger than the age still needs them; a dry run
 * by default. Run as the CLI an operator runs, against the services on NATS, PostgreSQL and S3 (an
 * s3rver started by the test) sharing a manual clock, so ages pass in milliseconds. Orphans are made
 * the way a gateway that died between its PUT and the record leaves them: bytes in the bucket, and
 * perhaps an intent, with no file.
 */
describe("baton evidence gc (issue #10: unreferenced objects, dry run by default, safe against a concurrent upload)", () => {
  let baton: DistributedDeployment;
  let s3: S3Server;
  let clock: TestClock;
  let db: pg.Client;
  let agent: McpSession;
  let operatorToken: string;

  const gc = async (...args: string[]) => {
    const { stdout } = await run(
      process.execPath,
      ["--import", "tsx", CLI, "evidence", "gc", ...args, "--url", baton.url, "--token", operatorToken],
      { cwd: REPO, timeout: 60_000 },
    );
    return stdout;
  };
  const intents = async () =>
    (await db.query("select org, sha256 from upload_intents order by created_at")).rows;

  beforeAll(async () => {
    baton = await startDistributed({ clock: "manual" });
    s3 = baton.s3 as S3Server;
    clock = await TestClock.of(baton);
    db = new pg.Client({ connectionString: baton.databaseUrl });
    await db.connect();
    agent = await baton.session({ kind: "agent", id: "a_gc" });
    operatorToken = await baton.token({ kind: "person", id: "ops@example.com", operator: true });
  }, 240_000);
  afterAll(async () => {
    await agent?.close();
    await db?.end();
    await baton?.stop();
  }, 120_000);

  it("lists only orphans older than the age, deletes them only with --delete, and never a cited file, another organization's, or one an upload in progress needs", async () => {
    const cited = await agent.ok("upload", {
      fileName: "cited.txt",
      contentType: "text/plain",
      contentBase64: b64("cited bytes"),
      requestId: randomUUID(),
    });
    const orphan = `default/${sha("orphan bytes")}`;
    const pending = `default/${sha("bytes of an upload in progress")}`;
    const foreign = `other-org/${sha("another organization's orphan")}`;
    const notOurs = "default/README.txt";
    await s3.overwrite(orphan, Buffer.from("orphan bytes"));
    await s3.overwrite(pending, Buffer.from("bytes of an upload in progress"));
    await s3.overwrite(foreign, Buffer.from("another organization's orphan"));
    await s3.overwrite(notOurs, Buffer.from("not Baton's"));
    const everything = await s3.keys();
    expect(everything).toContain(`default/${cited.sha256}`);

    // Everything was stored just now: younger than an hour, nothing is a candidate.
    expect(await gc("--older-than", "1h")).toMatch(
      /^3 objects examined; would delete 0 \(0 bytes\); kept 0 cited by a file and 3 younger than the age or being uploaded\n/m,
    );

    // Two hours on; an upload of `pending`'s bytes has just written its intent.
    await clock.advance(2 * HOUR);
    const now = new Date(await clock.now());
    await db.query(
      "insert into upload_intents (id, org, sha256, bytes, created_at) values ($1, $2, $3, $4, $5)",
      ["ui_test_pending", "default", pending.slice("default/".length), 30, now],
    );

    const dry = await gc("--older-than", "1h");
    expect(dry).toContain(`would delete ${orphan} 12 bytes, stored `);
    expect(dry).toMatch(
      /3 objects examined; would delete 1 \(12 bytes\); kept 1 cited by a file and 1 younger/,
    );
    expect(dry).toContain("dry run: nothing was deleted; run again with --delete to delete them");
    expect(await s3.keys()).toEqual(everything);

    const wet = await gc("--older-than", "1h", "--delete");
    expect(wet).toContain(`deleted ${orphan} 12 bytes`);
    expect(wet).not.toMatch(/dry run/);
    expect(await s3.keys()).toEqual(everything.filter((k) => k !== orphan));
    expect(await intents()).toEqual([{ org: "default", sha256: pending.slice("default/".length) }]);

    // Two more hours: the upload that wrote the intent never finished; its bytes and intent go.
    await clock.advance(2 * HOUR);
    const later = await gc("--older-than", "1h", "--delete");
    expect(later).toContain(`deleted ${pending} 30 bytes`);
    expect(later).toContain("dropped 1 stale upload intents");
    expect(await intents()).toEqual([]);
    expect(await s3.keys()).toEqual(everything.filter((k) => k !== orphan && k !== pending));
    expect(await s3.read(`default/${cited.sha256}`)).not.toBeNull();
    expect(await s3.read(foreign)).not.toBeNull();
    expect(await s3.read(notOurs)).not.toBeNull();
  });

  it("an upload's intent waits for a collection holding the object's lock, so the collector either sees it or deletes before the PUT", async () => {
    const text = "bytes a collector is looking at";
    const holder = new pg.Client({ connectionString: baton.databaseUrl });
    await holder.connect();
    try {
      await holder.query("begin");
      await holder.query("select pg_advisory_xact_lock(hashtextextended($1, 0))", [
        objectLockKey("default", sha(text)),
      ]);
      let settled = false;
      const upload = agent
        .call("upload", {
          fileName: "c.txt",
          contentType: "text/plain",
          contentBase64: b64(text),
          requestId: randomUUID(),
        })
        .finally(() => {
          settled = true;
        });
      // The evidence service's transaction is now queued behind the lock (PostgreSQL shows it waiting).
      const deadline = Date.now() + 30_000;
      for (;;) {
        const waiting = await db.query(
          `select count(*)::int as n from pg_locks l join pg_database d on d.oid = l.database
           where d.datname = current_database() and l.locktype = 'advisory' and not l.granted`,
        );
        if (waiting.rows[0].n > 0) break;
        if (Date.now() > deadline) throw new Error("the upload's intent never waited on the object's lock");
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(settled).toBe(false);
      expect(await s3.read(`default/${sha(text)}`)).toBeNull();
      await holder.query("commit");
      const result = await upload;
      expect(result.ok).toBe(true);
      expect((await s3.read(`default/${sha(text)}`))?.toString()).toBe(text);
    } finally {
      await holder.end();
    }
  });

  it("refuses an age under a minute and a caller without the operator role", async () => {
    await expect(gc("--older-than", "0m")).rejects.toMatchObject({
      stderr: expect.stringContaining("olderThanMs: a whole number of ms, at least 60000"),
    });
    const person = await baton.token({ kind: "person", id: "p@example.com" });
    const response = await fetch(`${baton.url.replace(/\/mcp$/, "")}/api/evidence/gc`, {
      method: "POST",
      headers: { authorization: `Bearer ${person}`, "content-type": "application/json" },
      body: JSON.stringify({ olderThanMs: HOUR }),
    });
    expect(response.status).toBe(403);
  });
});
