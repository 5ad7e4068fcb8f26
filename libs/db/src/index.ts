export { connectPostgres, type Database, type Db, openEmbedded, type PostgresOptions } from "./connect.ts";
export {
  drafts,
  files,
  idempotency,
  outbox,
  processVersions,
  readySteps,
  runJournal,
  runs,
  settings,
  timers,
  uploadIntents,
  workItems,
} from "./schema.ts";
