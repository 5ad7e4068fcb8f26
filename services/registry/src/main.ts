import { NatsBus } from "@baton/bus";
import { clockFor } from "@baton/clock/nats";
import { connectPostgres } from "@baton/db";
import { createLogger, parseEnv, untilSignal } from "@baton/kit";
import { OFFERED_PROFILES, OFFERED_TOOLS } from "@baton/protocol";
import { createRegistry } from "./app.ts";
import { RegistryConfigSchema } from "./config.ts";

/** `baton serve registry`: one registry replica over NATS and PostgreSQL. */
export async function main(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const config = parseEnv(RegistryConfigSchema, env, "registry");
  const log = createLogger("registry", config.BATON_LOG_LEVEL);
  const database = await connectPostgres(config.DATABASE_URL, { log });
  const bus = await NatsBus.connect(config.NATS_URL, "baton-registry", config.BATON_NAMESPACE, log);
  const { clock } = await clockFor(config.BATON_CLOCK, bus);
  const registry = createRegistry({
    db: database.db,
    bus,
    clock,
    log,
    offers: { tools: OFFERED_TOOLS, profiles: OFFERED_PROFILES },
  });
  await registry.start();
  await untilSignal();
  await registry.stop();
  await bus.close();
  await database.close();
}
