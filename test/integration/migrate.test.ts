import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, POSTGRES_URL, REPO } from "../support/deploy.ts";

const run = promisify(execFile);
const CLI = join(REPO, "services/cli/src/main.ts");

/** The migrations checked in (libs/db/drizzle/meta/_journal.json). */
const CHECKED_IN = (
  JSON.parse(readFileSync(join(REPO, "libs/db/drizzle/meta/_journal.json"), "utf8")) as { entries: unknown[] }
).entries.length;

/** `baton migrate` with `env` (and none of the test's own BATON_ or DATABASE_ variables); how it ended. */
async function migrate(env: Record<string, string>) {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith("BATON_") && k !== "DATABASE_URL"),
  );
  try {
    const { stdout, stderr } = await run(process.execPath, ["--import", "tsx", CLI, "migrate"], {
      cwd: REPO,
      timeout: 60_000,
      env: { ...base, ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}

/**
 * Issue #13 item 1: `baton migrate` applies the migrations alone, for the chart's pre-install and
 * pre-upgrade Job, under the advisory lock the services take on start: safe to run twice, and from
 * two replicas at once (each migration applied exactly once).
 */
describe("baton migrate (issue #13)", () => {
  const database = `baton_test_migrate_${randomBytes(4).toString("hex")}`;
  const url = POSTGRES_URL.replace(/\/[^/]*$/, `/${database}`);
  beforeAll(async () => {
    const admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
    await admin.query(`create database ${database}`);
    await admin.end();
  });
  afterAll(async () => {
    const admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
    await admin.query(`drop database if exists ${database} with (force)`);
    await admin.end();
  });

  it("two processes at once apply every migration exactly once; a third run finds nothing to do", async () => {
    const [a, b] = await Promise.all([migrate({ DATABASE_URL: url }), migrate({ DATABASE_URL: url })]);
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    const lines = [a.stdout.trim(), b.stdout.trim()].sort();
    // One applied them all while holding the lock; the other waited for it and found the database current.
    expect(lines).toEqual([
      `baton migrate: applied ${CHECKED_IN} migrations; the database has ${CHECKED_IN}`,
      `baton migrate: the database is up to date (${CHECKED_IN} migrations)`,
    ]);
    const again = await migrate({ DATABASE_URL: url });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout.trim()).toBe(`baton migrate: the database is up to date (${CHECKED_IN} migrations)`);

    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const recorded = await client.query("select hash from drizzle.__drizzle_migrations");
      expect(recorded.rowCount).toBe(CHECKED_IN);
      expect(new Set(recorded.rows.map((r) => r.hash)).size).toBe(CHECKED_IN);
      // The schema is there: the engine's one-statement commit of migration 0002, the runs table.
      const objects = await client.query(
        "select to_regclass('public.runs')::text as runs, to_regproc('public.baton_commit')::text as commit",
      );
      expect(objects.rows[0]).toEqual({ runs: "runs", commit: "baton_commit" });
    } finally {
      await client.end();
    }
  });

  it("without DATABASE_URL it lists the problem and exits 2; an unreachable server exits 1 naming the variable and the address, never the password", async () => {
    const missing = await migrate({});
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(
      "baton migrate: the environment is not usable:\n  DATABASE_URL: required",
    );

    const port = await freePort();
    const down = await migrate({ DATABASE_URL: `postgres://baton:hunter2-secret@127.0.0.1:${port}/baton` });
    expect(down.code).toBe(1);
    expect(down.stderr).toContain(`migrating DATABASE_URL (127.0.0.1:${port}/baton) failed:`);
    expect(down.stderr).not.toContain("hunter2");
  });
});
