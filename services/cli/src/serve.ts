// `baton serve <service>`: one service over NATS, PostgreSQL and the file store, configured by its environment.
import { type BlobEnv, type BlobStore, openBlobStore } from "@baton/blob";
import { NatsBus } from "@baton/bus";
import { clockFor } from "@baton/clock/nats";
import { connectPostgres, type Database, pingDatabase } from "@baton/db";
import {
  addressesOf,
  createLogger,
  flushTracing,
  Health,
  parseEnv,
  type Running,
  settingsForLog,
  startOpsServer,
  tracingEnabled,
  untilReachable,
  untilSignal,
} from "@baton/kit";

/** The services `baton serve` runs. */
export const SERVICES = ["gateway", "registry", "engine", "evidence", "scheduler", "notifier"] as const;
export type ServiceName = (typeof SERVICES)[number];

/** What every service's environment has: where NATS is, its namespace and clock, how much to log, its operations port. */
interface CommonEnv {
  NATS_URL: string;
  BATON_NAMESPACE: string;
  BATON_CLOCK: "real" | "manual";
  BATON_LOG_LEVEL: string;
  BATON_OPS_PORT: number | "off";
  BATON_OPS_HOST: string;
  BATON_STARTUP_TIMEOUT_SECONDS: number;
  BATON_DRAIN_DELAY_MS: number;
  DATABASE_URL?: string;
  BATON_DB_POOL?: number;
  BATON_REPLICA_ID?: string | undefined;
  /** The events stream's limits (engine, notifier): the stream is brought to them at start. */
  BATON_EVENTS_MAX_AGE_HOURS?: number;
  BATON_EVENTS_MAX_BYTES?: number;
}

/** The infrastructure `baton serve` builds from a service's environment. */
interface Infra {
  bus: NatsBus;
  clock: Awaited<ReturnType<typeof clockFor>>["clock"];
  mover: Awaited<ReturnType<typeof clockFor>>["mover"];
  log: ReturnType<typeof createLogger>;
  database: Database | null;
  /** `/readyz`: PostgreSQL and NATS are checked here; the service adds its own (S3, partitions). */
  health: Health;
}

/**
 * Builds a service's infrastructure from its parsed environment, starts it with `start`, and stops
 * it on a signal (issue #13):
 *
 * 1. logs its settings (secrets hidden) and starts the operations server (`BATON_OPS_PORT`), whose
 *    `/healthz` answers from now on and `/readyz` 503 until the service serves;
 * 2. reaches PostgreSQL (migrations under the advisory lock, logged) and NATS, each retried with
 *    back-off for `BATON_STARTUP_TIMEOUT_SECONDS`, naming the variable and the address; when one
 *    does not answer in time it exits 1 saying so;
 * 3. starts the service, which adds its readiness checks to PostgreSQL's and NATS's;
 * 4. on SIGTERM or SIGINT: `/readyz` answers 503 at once, `BATON_DRAIN_DELAY_MS` later the service
 *    drains (answers what is in flight, takes nothing new), lets go of NATS and PostgreSQL, and exits.
 */
async function run<E extends CommonEnv>(
  name: ServiceName,
  env: E,
  start: (env: E, infra: Infra) => Promise<Running>,
): Promise<void> {
  const log = createLogger(name, env.BATON_LOG_LEVEL);
  log.info({ settings: settingsForLog(env), tracing: tracingEnabled() }, "starting");
  const health = new Health();
  const ops =
    env.BATON_OPS_PORT === "off"
      ? null
      : await startOpsServer({ host: env.BATON_OPS_HOST, port: env.BATON_OPS_PORT, health, log }).catch(
          (error: Error) => fatal(name, error.message),
        );
  const timeoutMs = env.BATON_STARTUP_TIMEOUT_SECONDS * 1000;
  const databaseUrl = env.DATABASE_URL;
  const database = databaseUrl
    ? await untilReachable(
        { what: "PostgreSQL", variable: "DATABASE_URL", address: addressesOf(databaseUrl, 5432) },
        () => connectPostgres(databaseUrl, { ...(env.BATON_DB_POOL ? { max: env.BATON_DB_POOL } : {}), log }),
        { timeoutMs, log },
      ).catch((error: Error) => fatal(name, error.message))
    : null;
  const events =
    env.BATON_EVENTS_MAX_AGE_HOURS !== undefined && env.BATON_EVENTS_MAX_BYTES !== undefined
      ? { maxAgeMs: env.BATON_EVENTS_MAX_AGE_HOURS * 3_600_000, maxBytes: env.BATON_EVENTS_MAX_BYTES }
      : undefined;
  // Replicas that name themselves (engine, scheduler) show that name in NATS monitoring.
  const connection = env.BATON_REPLICA_ID ? `baton-${name}-${env.BATON_REPLICA_ID}` : `baton-${name}`;
  const bus = await untilReachable(
    { what: "NATS", variable: "NATS_URL", address: addressesOf(env.NATS_URL, 4222) },
    () => NatsBus.connect(env.NATS_URL, connection, env.BATON_NAMESPACE, log, events),
    { timeoutMs, log },
  ).catch((error: Error) => fatal(name, error.message));
  if (database) health.add("postgres", () => pingDatabase(database.db));
  health.add("nats", async () => {
    if (bus.connection.isClosed()) throw new Error("the NATS connection is closed");
    // A round trip to the server: fails while the connection is down and reconnecting.
    await bus.connection.rtt();
  });
  const { clock, mover } = await clockFor(env.BATON_CLOCK, bus);
  const running = await start(env, { bus, clock, mover, log, database, health });
  health.serving();
  log.info({ checks: health.names, opsPort: ops?.port ?? null }, "serving");
  const signal = await untilSignal();
  health.drain();
  log.info({ signal, drainDelayMs: env.BATON_DRAIN_DELAY_MS }, "stopping: unready now, draining next");
  if (env.BATON_DRAIN_DELAY_MS > 0) await new Promise((r) => setTimeout(r, env.BATON_DRAIN_DELAY_MS));
  await running.stop();
  await bus.close();
  await database?.close();
  await ops?.close();
  log.info({ signal }, "stopped");
  await flushTracing();
}

/** Ends the start of `name` with `message` on stderr (and exit 1): a dependency it cannot reach, a port it cannot use. */
function fatal(name: ServiceName, message: string): never {
  process.stderr.write(`baton serve ${name}: ${message}\n`);
  return process.exit(1);
}

/**
 * The file store of a service's environment: S3 when `BATON_S3_BUCKET` is set, else
 * `BATON_BLOB_DIR`. A store that does not answer stops the start (exit 1), saying why (issue #10).
 */
function openBlobs(name: ServiceName, env: BlobEnv): Promise<BlobStore> {
  return openBlobStore(env).catch((error: Error) => {
    process.stderr.write(`baton serve ${name}: ${error.message}\n`);
    return process.exit(1);
  });
}

/** What a service needs that its environment guarantees (the schemas require it). */
function required<T>(value: T | null, what: string): T {
  if (value === null) throw new Error(`${what} is required`);
  return value;
}

/**
 * Runs one service until SIGINT or SIGTERM: parses its environment (every problem listed, exit 2),
 * connects what it needs, and calls its start function, the same one `baton dev` calls. Only the
 * named service's code is loaded.
 */
export async function serve(name: ServiceName, processEnv: NodeJS.ProcessEnv = process.env): Promise<void> {
  switch (name) {
    case "gateway": {
      const { GatewayConfigSchema, gatewaySettings, startGateway } = await import("@baton/gateway");
      const env = parseEnv(GatewayConfigSchema, processEnv, name);
      const blobs = await openBlobs(name, env);
      return run(name, env, async (e, infra) => startGateway(await gatewaySettings(e), { ...infra, blobs }));
    }
    case "registry": {
      const { RegistryConfigSchema, registrySettings, startRegistry } = await import("@baton/registry");
      const env = parseEnv(RegistryConfigSchema, processEnv, name);
      return run(name, env, (e, infra) =>
        startRegistry(registrySettings(e), { ...infra, db: required(infra.database, "DATABASE_URL").db }),
      );
    }
    case "engine": {
      const { EngineConfigSchema, engineSettings, startEngine } = await import("@baton/engine-service");
      const env = parseEnv(EngineConfigSchema, processEnv, name);
      return run(name, env, (e, infra) =>
        startEngine(engineSettings(e), { ...infra, db: required(infra.database, "DATABASE_URL").db }),
      );
    }
    case "evidence": {
      const { EvidenceConfigSchema, startEvidence } = await import("@baton/evidence");
      const env = parseEnv(EvidenceConfigSchema, processEnv, name);
      const blobs = await openBlobs(name, env);
      return run(name, env, (_e, infra) =>
        startEvidence({}, { ...infra, db: required(infra.database, "DATABASE_URL").db, blobs }),
      );
    }
    case "scheduler": {
      const { SchedulerConfigSchema, schedulerSettings, startScheduler } = await import("@baton/scheduler");
      const env = parseEnv(SchedulerConfigSchema, processEnv, name);
      return run(name, env, (e, infra) =>
        startScheduler(schedulerSettings(e), { ...infra, db: required(infra.database, "DATABASE_URL").db }),
      );
    }
    case "notifier": {
      const { NotifierConfigSchema, startNotifier } = await import("@baton/notifier");
      const env = parseEnv(NotifierConfigSchema, processEnv, name);
      return run(name, env, (e, { mover, ...infra }) =>
        startNotifier(e, {
          ...infra,
          db: required(infra.database, "DATABASE_URL").db,
          ...(mover ? { watchClock: (listener: (now: number) => void) => mover.onChange(listener) } : {}),
        }),
      );
    }
    default: {
      const unreachable: never = name;
      throw new Error(`unknown service ${String(unreachable)}`);
    }
  }
}
