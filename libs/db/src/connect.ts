import { fileURLToPath } from "node:url";
import type { PGlite } from "@electric-sql/pglite";
import { sql } from "drizzle-orm";
import { drizzle as drizzlePg } from "drizzle-orm/node-postgres";
import { migrate as migratePg } from "drizzle-orm/node-postgres/migrator";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import pg from "pg";
import { PGliteThread } from "./pglite-thread.ts";
import * as schema from "./schema.ts";

/** The drizzle database type every service uses, whether over `pg` or PGlite. */
export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;

/** An open database with its migrations applied. */
/**
 * The rows of a raw statement (`db.execute(sql\`…\`)`), as `T`: node-postgres and PGlite both
 * answer `{ rows }`. The statement's columns are the caller's to name in `T`.
 */
export function rowsOf<T>(result: unknown): T[] {
  return (result as { rows: T[] }).rows;
}

export interface Database {
  db: Db;
  /** `postgres` over `pg` (`baton serve`), or `pglite` embedded (`baton dev`). */
  kind: "postgres" | "pglite";
  close(): Promise<void>;
}

const MIGRATIONS = fileURLToPath(new URL("../drizzle", import.meta.url));

/** A constant advisory-lock key, so concurrent service starts apply migrations one at a time. */
const MIGRATION_LOCK = 7_415_926_535;

/** Options of {@link connectPostgres}. */
export interface PostgresOptions {
  /** Connections in the pool (default 10). */
  max?: number;
  /**
   * Told (as a warning) of every connection that broke (terminated by the server, reset, timed
   * out), whether the pool held it idle or a caller had it checked out. Nothing is to be done: the
   * pool drops the connection, the caller's statement fails, and the next use opens a new one.
   */
  log?: { warn(obj: object, msg: string): void; info?(obj: object, msg: string): void };
}

/** How long opening a connection may take before the statement that needed it fails, ms. */
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * Connects to PostgreSQL at `url` with a `pg` pool (`max` connections) and applies the checked-in
 * migrations under an advisory lock, so several services starting at once migrate exactly once.
 * Throws when the server is unreachable or a migration fails.
 *
 * A dropped connection never ends the process (issue #8, part 4): node-postgres emits `error` on a
 * `Client` whose socket dies, and the pool listens only while the client is idle in it. A client
 * checked out for a transaction (drizzle's `transaction`, the migration) whose backend is terminated
 * or whose network is cut would emit with no listener, which Node turns into an uncaught exception.
 * So every client gets a listener of its own when the pool opens it; the statement in flight still
 * fails, and the pool replaces the connection. Opening a connection times out, so an unreachable
 * server fails statements instead of queueing them for ever.
 */
export async function connectPostgres(url: string, options: PostgresOptions = {}): Promise<Database> {
  const onError = (error: Error) =>
    options.log?.warn({ err: error.message }, "database connection lost; the next statement reconnects");
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
  // Every client reports its own broken connection, idle or checked out (without a listener, a
  // checked-out one would end the process).
  pool.on("connect", (client) => client.on("error", (error) => onError(error)));
  // The pool re-emits an idle client's error, already reported above; it removes that client.
  pool.on("error", () => undefined);
  try {
    const client = await pool.connect();
    try {
      const { applied, total } = await migrateUnderLock(client);
      options.log?.info?.({ applied, total }, applied > 0 ? "migrations applied" : "migrations up to date");
    } finally {
      client.release();
    }
  } catch (error) {
    // Nothing is left open by a start that failed (a caller may try again).
    await pool.end().catch(() => undefined);
    throw error;
  }
  const db = drizzlePg(pool, { schema }) as unknown as Db;
  return { db, kind: "postgres", close: () => pool.end() };
}

/** What {@link migratePostgres} did: migrations applied by this call, and how many the database has now. */
export interface Migrated {
  /** Migrations this call applied (0 when the database was up to date). */
  applied: number;
  /** Migrations recorded in the database after the call (those checked in, once up to date). */
  total: number;
}

/**
 * `baton migrate`: applies the checked-in migrations to the database at `url` and nothing else, on
 * one connection, under the same advisory lock the services take on start. Safe to run twice (a
 * migration already recorded is skipped) and from several processes at once (the lock makes the
 * others wait, then find nothing to do). Throws when the server is unreachable or a migration fails
 * (that migration's transaction is rolled back).
 */
export async function migratePostgres(url: string): Promise<Migrated> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  // A connection that dies mid-way fails the statement in flight (and so this call); without a
  // listener it would also end the process.
  client.on("error", () => undefined);
  await client.connect();
  try {
    return await migrateUnderLock(client);
  } finally {
    await client.end();
  }
}

/** Migrations recorded in drizzle's journal table, or 0 before the first migration made it. */
async function recordedMigrations(client: pg.ClientBase): Promise<number> {
  const exists = await client.query<{ t: string | null }>(
    "select to_regclass('drizzle.__drizzle_migrations')::text as t",
  );
  if (!exists.rows[0]?.t) return 0;
  const count = await client.query<{ n: number }>(
    "select count(*)::int as n from drizzle.__drizzle_migrations",
  );
  return count.rows[0]?.n ?? 0;
}

/**
 * Applies the checked-in migrations on `client` while holding the advisory lock
 * {@link MIGRATION_LOCK}, so concurrent starts (and `baton migrate`) apply each exactly once.
 */
async function migrateUnderLock(client: pg.PoolClient | pg.Client): Promise<Migrated> {
  await client.query("select pg_advisory_lock($1)", [MIGRATION_LOCK]);
  try {
    const before = await recordedMigrations(client);
    await migratePg(drizzlePg(client, { schema }), { migrationsFolder: MIGRATIONS });
    const total = await recordedMigrations(client);
    return { applied: total - before, total };
  } finally {
    await client.query("select pg_advisory_unlock($1)", [MIGRATION_LOCK]);
  }
}

/**
 * Resolves when the database answers a trivial statement (`select 1`), throws when it does not:
 * the readiness check of every service that uses PostgreSQL (`/readyz`, issue #13).
 */
export async function pingDatabase(db: Db): Promise<void> {
  await db.execute(sql`select 1`);
}

/**
 * Opens (or creates) an embedded PGlite database in `dataDir` and applies the migrations. One process
 * owns the directory at a time. `dataDir` of `memory://` keeps everything in memory. PGlite runs on a
 * worker thread of its own ({@link PGliteThread}), so its statements never hold the event loop;
 * `onStopped` is told if that thread stops before `close` (every statement since fails).
 */
export async function openEmbedded(dataDir: string, onStopped?: (reason: Error) => void): Promise<Database> {
  const client = await PGliteThread.create(dataDir, onStopped);
  // drizzle's driver and migrator use only the part of PGlite's interface the thread offers.
  const db = drizzlePglite(client as unknown as PGlite, { schema });
  await migratePglite(db, { migrationsFolder: MIGRATIONS });
  return { db: db as unknown as Db, kind: "pglite", close: () => client.close() };
}
