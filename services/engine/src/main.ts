import { hostname } from "node:os";
import { NatsBus } from "@baton/bus";
import { clockFor } from "@baton/clock/nats";
import { connectPostgres } from "@baton/db";
import { createLogger, parseEnv, untilSignal } from "@baton/kit";
import { createEngine } from "./app.ts";
import { EngineConfigSchema } from "./config.ts";
import { KvLeases } from "./partitions/leases.ts";

/** `baton serve engine`: one engine replica over NATS and PostgreSQL. */
export async function main(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const config = parseEnv(EngineConfigSchema, env, "engine");
  const log = createLogger("engine", config.BATON_LOG_LEVEL);
  const replicaId = config.BATON_REPLICA_ID ?? `${hostname()}-${process.pid}`;
  const database = await connectPostgres(config.DATABASE_URL, { max: config.BATON_DB_POOL, log });
  const bus = await NatsBus.connect(
    config.NATS_URL,
    `baton-engine-${replicaId}`,
    config.BATON_NAMESPACE,
    log,
  );
  const { clock } = await clockFor(config.BATON_CLOCK, bus);
  const ownership = new KvLeases(bus.connection, {
    replicaId: replicaId,
    partitions: config.BATON_PARTITIONS,
    bucket: `${config.BATON_NAMESPACE}_partitions`,
    log,
  });
  const engine = createEngine({
    db: database.db,
    bus,
    clock,
    log,
    ownership,
    settings: {
      partitions: config.BATON_PARTITIONS,
      leaseMs: config.BATON_LEASE_SECONDS * 1000,
      runDataBytes: config.BATON_RUN_DATA_BYTES,
      operatorGroup: config.BATON_OPERATOR_GROUP,
      secret: config.BATON_SECRET,
      callTimeoutMs: 10_000,
      attemptMs: config.BATON_ATTEMPT_TIMEOUT_MS,
    },
  });
  await engine.start();
  log.info({ replica: replicaId }, "engine serving");
  await untilSignal();
  await engine.stop();
  await bus.close();
  await database.close();
}
