import { openBlobStore } from "@baton/blob";
import { clockFor, NatsBus, parseEnv, untilSignal } from "@baton/bus";
import { connectPostgres } from "@baton/db";
import pino from "pino";
import { createEvidence } from "./app.ts";
import { EvidenceConfigSchema } from "./config.ts";

/** `baton serve evidence`: one evidence replica over NATS, PostgreSQL and the blob store. */
export async function main(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const config = parseEnv(EvidenceConfigSchema, env, "evidence");
  const log = pino({ name: "evidence", level: config.BATON_LOG_LEVEL });
  // S3 when BATON_S3_BUCKET is set, else BATON_BLOB_DIR; a store that does not answer stops the start.
  const blobs = await openBlobStore(config).catch((error: Error) => {
    process.stderr.write(`baton serve evidence: ${error.message}\n`);
    return process.exit(1);
  });
  const database = await connectPostgres(config.DATABASE_URL, { log });
  const bus = await NatsBus.connect(config.NATS_URL, "baton-evidence", config.BATON_NAMESPACE, log);
  const { clock } = await clockFor(config.BATON_CLOCK, bus);
  const evidence = createEvidence({
    db: database.db,
    bus,
    blobs,
    clock,
    log,
  });
  await evidence.start();
  await untilSignal();
  await evidence.stop();
  await bus.close();
  await database.close();
}
