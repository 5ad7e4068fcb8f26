// `baton serve <service>`: one service over NATS, PostgreSQL and the file store, configured by its environment.
import { type BlobEnv, type BlobStore, openBlobStore } from "@baton/blob";
import { NatsBus } from "@baton/bus";
import { clockFor } from "@baton/clock/nats";
import { connectPostgres, type Database } from "@baton/db";
import { createLogger, parseEnv, type Running, untilSignal } from "@baton/kit";

/** The services `baton serve` runs. */
export const SERVICES = ["gateway", "registry", "engine", "evidence", "scheduler", "notifier"] as const;
export type ServiceName = (typeof SERVICES)[number];

/** What every service's environment has: where NATS is, its namespace and clock, how much to log. */
interface CommonEnv {
  NATS_URL: string;
  BATON_NAMESPACE: string;
  BATON_CLOCK: "real" | "manual";
  BATON_LOG_LEVEL: string;
  DATABASE_URL?: string;
  BATON_DB_POOL?: number;
  BATON_REPLICA_ID?: string | undefined;
}

/** The infrastructure `baton serve` builds from a service's environment. */
interface Infra {
  bus: NatsBus;
  clock: Awaited<ReturnType<typeof clockFor>>["clock"];
  mover: Awaited<ReturnType<typeof clockFor>>["mover"];
  log: ReturnType<typeof createLogger>;
  database: Database | null;
}

/** Builds a service's infrastructure from its parsed environment, starts it with `start`, and stops it on a signal. */
async function run<E extends CommonEnv>(
  name: ServiceName,
  env: E,
  start: (env: E, infra: Infra) => Promise<Running>,
): Promise<void> {
  const log = createLogger(name, env.BATON_LOG_LEVEL);
  const database = env.DATABASE_URL
    ? await connectPostgres(env.DATABASE_URL, {
        ...(env.BATON_DB_POOL ? { max: env.BATON_DB_POOL } : {}),
        log,
      })
    : null;
  // Replicas that name themselves (engine, scheduler) show that name in NATS monitoring.
  const connection = env.BATON_REPLICA_ID ? `baton-${name}-${env.BATON_REPLICA_ID}` : `baton-${name}`;
  const bus = await NatsBus.connect(env.NATS_URL, connection, env.BATON_NAMESPACE, log);
  const { clock, mover } = await clockFor(env.BATON_CLOCK, bus);
  const running = await start(env, { bus, clock, mover, log, database });
  await untilSignal();
  await running.stop();
  await bus.close();
  await database?.close();
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
