import { hostname } from "node:os";
import { NatsBus } from "@baton/bus";
import { clockFor } from "@baton/clock/nats";
import { connectPostgres } from "@baton/db";
import { createLogger, parseEnv, untilSignal } from "@baton/kit";
import { createScheduler, type SchedulerFaults } from "./app.ts";
import { SchedulerConfigSchema } from "./config.ts";

/** `baton serve scheduler`: one scheduler replica over NATS and PostgreSQL. */
export async function main(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const config = parseEnv(SchedulerConfigSchema, env, "scheduler");
  const log = createLogger("scheduler", config.BATON_LOG_LEVEL);
  const replicaId = config.BATON_REPLICA_ID ?? `${hostname()}-${process.pid}`;
  const database = await connectPostgres(config.DATABASE_URL, { max: config.BATON_DB_POOL, log });
  const bus = await NatsBus.connect(
    config.NATS_URL,
    `baton-scheduler-${replicaId}`,
    config.BATON_NAMESPACE,
    log,
  );
  const { clock, mover } = await clockFor(config.BATON_CLOCK, bus);
  // Test hook (BATON_SCHEDULER_FAULT): die the hard way, exactly where the exactly-once tests need it.
  const die = async () => {
    await bus.connection.flush();
    log.warn({ fault: config.BATON_SCHEDULER_FAULT }, "test fault: SIGKILL");
    process.kill(process.pid, "SIGKILL");
  };
  const faults: SchedulerFaults =
    config.BATON_SCHEDULER_FAULT === "kill-after-take"
      ? { afterTake: die }
      : config.BATON_SCHEDULER_FAULT === "kill-after-send"
        ? { afterSend: die }
        : {};
  const scheduler = createScheduler({
    db: database.db,
    bus,
    clock,
    mover,
    log,
    faults,
    settings: {
      replicaId,
      pollMs: config.BATON_SCHEDULER_POLL_MS,
      claimMs: config.BATON_SCHEDULER_CLAIM_MS,
      backoffMs: config.BATON_SCHEDULER_BACKOFF_MS,
      partitions: config.BATON_PARTITIONS,
      batch: config.BATON_SCHEDULER_BATCH,
      concurrency: config.BATON_SCHEDULER_CONCURRENCY,
      tickTimeoutMs: config.BATON_CALL_TIMEOUT_MS,
      attemptMs: config.BATON_ATTEMPT_TIMEOUT_MS,
      clockOrg: config.BATON_CLOCK_ORG,
    },
  });
  await scheduler.start();
  await untilSignal();
  await scheduler.stop();
  await bus.close();
  await database.close();
}
