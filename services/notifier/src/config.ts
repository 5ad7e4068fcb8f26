import { OPS_ENV, SHARED_ENV } from "@baton/kit";
import { z } from "zod";

const flag = (description: string) =>
  z
    .enum(["true", "false"])
    .default("false")
    .transform((v) => v === "true")
    .describe(description);

const ms = (min: number, def: number, description: string) =>
  z.coerce.number().int().min(min).default(def).describe(description);

/**
 * What the notifier does, whatever it runs over (CONVENTIONS: one zod schema over the environment).
 * `baton dev` parses it too, from its own options, with private `http:` targets allowed.
 */
export const NotifierSettingsSchema = z.object({
  BATON_PUBLIC_URL: z
    .url()
    .describe(
      "The gateway's public base URL, for the link to the run in every webhook payload and mail (e.g. https://baton.example.com).",
    ),
  BATON_SMTP_URL: z
    .string()
    .min(1)
    .optional()
    .describe(
      "SMTP server mail is sent through (nodemailer URL, e.g. smtps://user:pass@smtp.example.com or smtp://127.0.0.1:2525). Unset: no mail (baton dev writes .eml files instead). Never logged.",
    ),
  BATON_MAIL_FROM: z.string().min(3).default("Baton <baton@localhost>").describe("The From: of every mail."),
  BATON_OPERATORS_EMAIL: z
    .email()
    .optional()
    .describe(
      "Where the organization's operators are told that work is overdue (§2.2 due), besides the operator group's mailing address when one is set.",
    ),
  BATON_WEBHOOK_ALLOW_PRIVATE: flag(
    "true: webhooks may target loopback, private, link-local and other non-public addresses (baton dev sets it). Checked when a subscription is made and again against the resolved address at every delivery.",
  ),
  BATON_WEBHOOK_ALLOW_HTTP: flag(
    "true: webhook URLs may be http:// as well as https:// (baton dev sets it).",
  ),
  BATON_NOTIFIER_TIMEOUT_MS: ms(
    100,
    10_000,
    "How long one delivery attempt may take (connect, send, answer), ms; longer is a failed attempt.",
  ),
  BATON_NOTIFIER_RETRY_BASE_MS: ms(
    1,
    10_000,
    "The wait after a delivery's first failed attempt, ms of the server's clock; it doubles after each failure (with jitter) up to BATON_NOTIFIER_RETRY_MAX_MS. On a manual clock, retries come as the clock is moved.",
  ),
  BATON_NOTIFIER_RETRY_MAX_MS: ms(1, 3_600_000, "The longest wait between two attempts, ms."),
  BATON_NOTIFIER_GIVE_UP_MS: ms(
    1,
    24 * 3_600_000,
    "How long a delivery is retried before it is marked dead, ms after it was created (or sent again by an operator).",
  ),
  BATON_NOTIFIER_HOLD_MS: ms(
    1_000,
    60_000,
    "How long a replica holds the deliveries it is sending, ms of PostgreSQL's clock; if it dies, another replica sends them after this. Must exceed BATON_NOTIFIER_TIMEOUT_MS.",
  ),
  BATON_NOTIFIER_POLL_MS: ms(10, 1_000, "Longest sleep between looks for due deliveries, ms."),
  BATON_NOTIFIER_CONCURRENCY: z.coerce
    .number()
    .int()
    .min(1)
    .max(1_000)
    .default(32)
    .describe("Deliveries in flight at once in this replica."),
  BATON_NOTIFIER_PER_TARGET: z.coerce
    .number()
    .int()
    .min(1)
    .max(1_000)
    .default(4)
    .describe(
      "Deliveries in flight at once to one subscription or address, so a slow receiver never takes every slot.",
    ),
  BATON_NOTIFIER_ACK_WAIT_MS: ms(
    500,
    30_000,
    "How long JetStream waits for this service to record an event before it offers the event again (to any replica), ms.",
  ),
  BATON_NOTIFIER_FAULT: z
    .enum(["no-ack", "kill-after-send"])
    .optional()
    .describe(
      "TEST HOOK, never set in production: no-ack records events but never acknowledges them (JetStream redelivers them); kill-after-send SIGKILLs the replica right after its first webhook got an answer, before it is recorded.",
    ),
  BATON_REPLICA_ID: z
    .string()
    .min(1)
    .optional()
    .describe("This replica's name in delivery holds, attempts and logs (default: hostname-pid)."),
  BATON_LOG_LEVEL: SHARED_ENV.BATON_LOG_LEVEL,
});
export type NotifierSettings = z.infer<typeof NotifierSettingsSchema>;

/**
 * The notifier service's configuration (`baton serve notifier`), from the environment: the settings
 * and where to reach PostgreSQL and NATS. Run any number of replicas: they share one durable
 * JetStream consumer and the deliveries in PostgreSQL.
 */
export const NotifierConfigSchema = NotifierSettingsSchema.extend({
  DATABASE_URL: SHARED_ENV.DATABASE_URL,
  NATS_URL: SHARED_ENV.NATS_URL,
  BATON_NAMESPACE: SHARED_ENV.BATON_NAMESPACE,
  BATON_CLOCK: SHARED_ENV.BATON_CLOCK,
  BATON_EVENTS_MAX_AGE_HOURS: SHARED_ENV.BATON_EVENTS_MAX_AGE_HOURS,
  BATON_EVENTS_MAX_BYTES: SHARED_ENV.BATON_EVENTS_MAX_BYTES,
  BATON_DB_POOL: z.coerce
    .number()
    .int()
    .min(1)
    .default(4)
    .describe("PostgreSQL connections in this process's pool."),
  ...OPS_ENV,
}).refine((c) => c.BATON_NOTIFIER_HOLD_MS > c.BATON_NOTIFIER_TIMEOUT_MS, {
  path: ["BATON_NOTIFIER_HOLD_MS"],
  message:
    "must be longer than BATON_NOTIFIER_TIMEOUT_MS, or a second replica could send while the first waits",
});
export type NotifierConfig = z.infer<typeof NotifierConfigSchema>;

/**
 * The notifier's settings inside `baton dev`: its mail and retry settings from the environment
 * (`BATON_SMTP_URL`, `BATON_MAIL_FROM`, `BATON_OPERATORS_EMAIL`, `BATON_NOTIFIER_*`), the server's
 * public URL, `smtpUrl` (`--smtp`) over `BATON_SMTP_URL`, and webhooks allowed to reach `http://`
 * and private addresses (a newcomer's receiver runs on their own machine). Throws listing every
 * problem (never a value).
 */
export function devNotifierSettings(
  env: NodeJS.ProcessEnv,
  fixed: { publicUrl: string; smtpUrl?: string },
): NotifierSettings {
  const picked = Object.fromEntries(
    Object.entries(env).filter(
      ([k]) =>
        k === "BATON_SMTP_URL" ||
        k === "BATON_MAIL_FROM" ||
        k === "BATON_OPERATORS_EMAIL" ||
        k === "BATON_LOG_LEVEL" ||
        k.startsWith("BATON_NOTIFIER_"),
    ),
  );
  const parsed = NotifierSettingsSchema.safeParse({
    ...picked,
    ...(fixed.smtpUrl ? { BATON_SMTP_URL: fixed.smtpUrl } : {}),
    BATON_PUBLIC_URL: fixed.publicUrl,
    BATON_WEBHOOK_ALLOW_PRIVATE: "true",
    BATON_WEBHOOK_ALLOW_HTTP: "true",
    BATON_REPLICA_ID: "dev",
  });
  if (parsed.success) return parsed.data;
  throw new Error(
    `the notifier's settings are not usable:\n${parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message.replace(/, received .*/, "")}`).join("\n")}`,
  );
}
