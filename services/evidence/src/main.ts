import { LocalBlobStore } from "@baton/blob";
import { NatsBus } from "@baton/bus";
import { clockFor } from "@baton/clock/nats";
import { connectPostgres } from "@baton/db";
import { createLogger, parseEnv, untilSignal } from "@baton/kit";
import { createEvidence } from "./app.ts";
import { EvidenceConfigSchema } from "./config.ts";

/** `baton serve evidence`: one evidence replica over NATS, PostgreSQL and the blob store. */
export async function main(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const config = parseEnv(EvidenceConfigSchema, env, "evidence");
  const log = createLogger("evidence", config.BATON_LOG_LEVEL);
  const database = await connectPostgres(config.DATABASE_URL, { log });
  const bus = await NatsBus.connect(config.NATS_URL, "baton-evidence", config.BATON_NAMESPACE, log);
  const { clock } = await clockFor(config.BATON_CLOCK, bus);
  const evidence = createEvidence({
    db: database.db,
    bus,
    blobs: new LocalBlobStore(config.BATON_BLOB_DIR),
    clock,
    log,
  });
  await evidence.start();
  await untilSignal();
  await evidence.stop();
  await bus.close();
  await database.close();
}
