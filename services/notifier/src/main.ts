import { clockFor, NatsBus, parseEnv, untilSignal } from "@baton/bus";
import { connectPostgres } from "@baton/db";
import pino from "pino";
import { NotifierConfigSchema } from "./config.ts";
import { startNotifier } from "./start.ts";

/** `baton serve notifier`: one notifier replica over NATS and PostgreSQL (thin wiring; see `start.ts`). */
export async function main(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const config = parseEnv(NotifierConfigSchema, env, "notifier");
  const log = pino({ name: "notifier", level: config.BATON_LOG_LEVEL });
  const database = await connectPostgres(config.DATABASE_URL, { max: config.BATON_DB_POOL, log });
  const bus = await NatsBus.connect(config.NATS_URL, "baton-notifier", config.BATON_NAMESPACE, log);
  const { clock, mover } = await clockFor(config.BATON_CLOCK, bus);
  const notifier = await startNotifier(config, {
    db: database.db,
    bus,
    clock,
    log,
    ...(mover ? { watchClock: (listener: (now: number) => void) => mover.onChange(listener) } : {}),
  });
  await untilSignal();
  await notifier.stop();
  await bus.close();
  await database.close();
}
