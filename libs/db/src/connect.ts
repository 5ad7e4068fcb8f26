import { fileURLToPath } from "node:url";
import { PGlite } from "@electric-sql/pglite";
import { drizzle as drizzlePg } from "drizzle-orm/node-postgres";
import { migrate as migratePg } from "drizzle-orm/node-postgres/migrator";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import pg from "pg";
import * as schema from "./schema.ts";

/** The drizzle database type every service uses, whether over `pg` or PGlite. */
export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;

/** An open database with its migrations applied. */
export interface Database {
  db: Db;
  /** `postgres` over `pg` (`baton serve`), or `pglite` embedded (`baton dev`). */
  kind: "postgres" | "pglite";
  close(): Promise<void>;
}

const MIGRATIONS = fileURLToPath(new URL("../drizzle", import.meta.url));

/** A constant advisory-lock key, so concurrent service starts apply migrations one at a time. */
const MIGRATION_LOCK = 7_415_926_535;

/**
 * Connects to PostgreSQL at `url` with a `pg` pool (`max` connections) and applies the checked-in
 * migrations under an advisory lock, so several services starting at once migrate exactly once.
 * Throws when the server is unreachable or a migration fails.
 */
export async function connectPostgres(url: string, options: { max?: number } = {}): Promise<Database> {
  const pool = new pg.Pool({ connectionString: url, max: options.max ?? 10 });
  pool.on("error", () => {
    // An idle client's connection dropped; the pool replaces it on next use. Nothing to do here.
  });
  const client = await pool.connect();
  try {
    await client.query("select pg_advisory_lock($1)", [MIGRATION_LOCK]);
    try {
      await migratePg(drizzlePg(client, { schema }), { migrationsFolder: MIGRATIONS });
    } finally {
      await client.query("select pg_advisory_unlock($1)", [MIGRATION_LOCK]);
    }
  } finally {
    client.release();
  }
  const db = drizzlePg(pool, { schema }) as unknown as Db;
  return { db, kind: "postgres", close: () => pool.end() };
}

/**
 * Opens (or creates) an embedded PGlite database in `dataDir` and applies the migrations. One process
 * owns the directory at a time. `dataDir` of `memory://` keeps everything in memory.
 */
export async function openEmbedded(dataDir: string): Promise<Database> {
  const client = await PGlite.create(dataDir);
  const db = drizzlePglite(client, { schema });
  await migratePglite(db, { migrationsFolder: MIGRATIONS });
  return { db: db as unknown as Db, kind: "pglite", close: () => client.close() };
}
