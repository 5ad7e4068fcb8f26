// `baton migrate`: the database's migrations, applied alone (the chart's pre-install/pre-upgrade hook).
import { type Migrated, migratePostgres } from "@baton/db";
import { parseEnv, SHARED_ENV } from "@baton/kit";
import { z } from "zod";

/** `baton migrate`'s environment: only where PostgreSQL is. */
export const MigrateConfigSchema = z
  .object({ DATABASE_URL: SHARED_ENV.DATABASE_URL })
  .describe(
    "Applies the migrations and exits; the services also apply them on start, under the same advisory lock.",
  );

/** `host:port/database` of a PostgreSQL URL, never its user or password, for messages. */
export function describeDatabase(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || "5432"}${u.pathname}`;
  } catch {
    return "(a URL that does not parse)";
  }
}

/**
 * Applies the checked-in migrations to `DATABASE_URL` under the services' advisory lock and says what
 * it did. Safe to run twice and from several replicas at once (`migratePostgres`). An environment
 * without `DATABASE_URL` exits 2 listing the problem; an unreachable server or a failed migration
 * throws, naming the variable and the address (never the password).
 */
export async function migrate(processEnv: NodeJS.ProcessEnv = process.env): Promise<Migrated> {
  const env = parseEnv(MigrateConfigSchema, processEnv, "migrate", "baton migrate");
  try {
    return await migratePostgres(env.DATABASE_URL);
  } catch (error) {
    const why = error instanceof Error ? error.message || error.name : String(error);
    throw new Error(`migrating DATABASE_URL (${describeDatabase(env.DATABASE_URL)}) failed: ${why}`);
  }
}

/** The line `baton migrate` prints. */
export function formatMigrated(m: Migrated): string {
  return m.applied === 0
    ? `the database is up to date (${m.total} migrations)`
    : `applied ${m.applied} migration${m.applied === 1 ? "" : "s"}; the database has ${m.total}`;
}
