export { connectPostgres, type Database, type Db, openEmbedded, type PostgresOptions } from "./connect.ts";
export {
  drafts,
  files,
  groupEmails,
  idempotency,
  notificationAttempts,
  notificationDeliveries,
  notificationEvents,
  outbox,
  processVersions,
  readySteps,
  runJournal,
  runs,
  settings,
  timers,
  webhookSubscriptions,
  workItems,
} from "./schema.ts";
