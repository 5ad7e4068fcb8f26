import { createHash } from "node:crypto";
import type { Logger } from "@baton/kit";
import type { Identity } from "@baton/protocol";
import { Redis } from "ioredis";
import {
  type RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
} from "rate-limiter-flexible";
import { z } from "zod";

/**
 * Rate limits on what callers send (issue #12): per principal (organization and caller id) and per
 * organization, separately for writes and reads, in fixed windows. With Redis (`REDIS_URL`) the
 * counters are shared by every gateway replica; without it (`baton dev`, a single replica) they are
 * kept in memory. Redis never decides an outcome (ARCHITECTURE: Redis holds rate-limit counters and
 * caches only): when it cannot be reached the gateway serves without limits and says so in a
 * warning, and never answers a call because of Redis.
 */

/** Calls allowed per window; 0 switches a limit off. */
export interface RateLimits {
  /** Length of a window, seconds. */
  windowSeconds: number;
  principalWrites: number;
  principalReads: number;
  organizationWrites: number;
  organizationReads: number;
}

/**
 * The defaults: far above what an agent or a person working a queue sends, and well within what one
 * gateway replica serves, so only a looping or hostile client meets them.
 */
export const DEFAULT_RATE_LIMITS: RateLimits = {
  windowSeconds: 60,
  principalWrites: 1_200,
  principalReads: 6_000,
  organizationWrites: 60_000,
  organizationReads: 300_000,
};

const perWindow = (what: string, fallback: number) =>
  z.coerce
    .number()
    .int()
    .min(0)
    .default(fallback)
    .describe(`${what} per window (BATON_RATE_WINDOW_SECONDS); 0 switches the limit off.`);

/** The gateway's rate-limit variables, as zod fields for its config. */
export const RATE_LIMIT_ENV = {
  REDIS_URL: z
    .string()
    .min(1)
    .optional()
    .describe(
      "Redis URL for rate-limit counters shared by every gateway replica. Unset: each replica counts in memory. Unreachable: the gateway serves without limits and logs a warning.",
    ),
  BATON_RATE_WINDOW_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(3600)
    .default(DEFAULT_RATE_LIMITS.windowSeconds)
    .describe("Length of a rate-limit window, seconds."),
  BATON_RATE_PRINCIPAL_WRITES: perWindow(
    "Write tool calls (start_run, claim, submit, decide, …) and admin API writes one caller may make",
    DEFAULT_RATE_LIMITS.principalWrites,
  ),
  BATON_RATE_PRINCIPAL_READS: perWindow(
    "Other MCP requests (reads, describe, tools/list) and admin API reads one caller may make",
    DEFAULT_RATE_LIMITS.principalReads,
  ),
  BATON_RATE_ORG_WRITES: perWindow(
    "Writes (tool calls and admin API) all callers of one organization may make together",
    DEFAULT_RATE_LIMITS.organizationWrites,
  ),
  BATON_RATE_ORG_READS: perWindow(
    "Other requests (MCP and admin API reads) all callers of one organization may make together",
    DEFAULT_RATE_LIMITS.organizationReads,
  ),
} as const;

/** The limits the parsed variables give. */
export function rateLimitsFromEnv(env: {
  BATON_RATE_WINDOW_SECONDS: number;
  BATON_RATE_PRINCIPAL_WRITES: number;
  BATON_RATE_PRINCIPAL_READS: number;
  BATON_RATE_ORG_WRITES: number;
  BATON_RATE_ORG_READS: number;
}): RateLimits {
  return {
    windowSeconds: env.BATON_RATE_WINDOW_SECONDS,
    principalWrites: env.BATON_RATE_PRINCIPAL_WRITES,
    principalReads: env.BATON_RATE_PRINCIPAL_READS,
    organizationWrites: env.BATON_RATE_ORG_WRITES,
    organizationReads: env.BATON_RATE_ORG_READS,
  };
}

/** Which budget a request draws on. */
export type CallKind = "read" | "write";

/** A limit that was reached: whose, and how long until the window lets the next call through. */
export interface Limited {
  scope: "caller" | "organization";
  kind: CallKind;
  /** Whole seconds to wait, at least 1 (`Retry-After`). */
  retryAfterSeconds: number;
}

/** Counts calls against the limits. */
export interface RateLimiter {
  /** Counts one request of `who`; null when it is within every limit, else the limit it broke. */
  take(who: Identity, kind: CallKind): Promise<Limited | null>;
  close(): Promise<void>;
}

/** How long a Redis command may take before the call goes on without it, ms. */
const REDIS_COMMAND_MS = 250;
/** At most one warning about Redis per this many ms, however many calls go unlimited meanwhile. */
const WARN_EVERY_MS = 30_000;

/** A short digest of a key part: bounded Redis keys, and no caller id or organization stored there. */
const digest = (text: string) => createHash("sha256").update(text).digest("base64url").slice(0, 22);

/**
 * A limiter over `redis` when given (shared by every replica with the same `namespace`), else in
 * memory. `redisUrl` makes the connection here; the limiter owns it and closes it.
 */
export function createRateLimiter(options: {
  limits: RateLimits;
  namespace: string;
  log: Logger;
  redisUrl?: string;
}): RateLimiter {
  const { limits, namespace, log } = options;
  let lastWarning = 0;
  const warn = (what: string, error: unknown) => {
    const now = Date.now();
    if (now - lastWarning < WARN_EVERY_MS) return;
    lastWarning = now;
    // The message only: an ioredis error's fields can include the URL, and a URL may hold a password.
    log.warn(
      { err: error instanceof Error ? error.message : String(error) },
      `${what}: rate limits are not applied until Redis answers again (calls are served meanwhile)`,
    );
  };
  let redis: Redis | null = null;
  if (options.redisUrl) {
    redis = new Redis(options.redisUrl, {
      // Fail a command at once while disconnected rather than queueing it behind a call.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: REDIS_COMMAND_MS,
      connectTimeout: 2_000,
      retryStrategy: (attempt) => Math.min(attempt * 250, 2_000),
    });
    // Without a listener ioredis prints every connection error itself.
    redis.on("error", (error) => warn("Redis is unreachable", error));
  }
  const make = (name: string, points: number): RateLimiterAbstract | null => {
    if (points === 0) return null;
    const common = { keyPrefix: `${namespace}:rl:${name}`, points, duration: limits.windowSeconds };
    return redis
      ? new RateLimiterRedis({ ...common, storeClient: redis, rejectIfRedisNotReady: true })
      : new RateLimiterMemory(common);
  };
  const budgets: Record<CallKind, { scope: Limited["scope"]; limiter: RateLimiterAbstract | null }[]> = {
    write: [
      { scope: "caller", limiter: make("pw", limits.principalWrites) },
      { scope: "organization", limiter: make("ow", limits.organizationWrites) },
    ],
    read: [
      { scope: "caller", limiter: make("pr", limits.principalReads) },
      { scope: "organization", limiter: make("or", limits.organizationReads) },
    ],
  };
  return {
    async take(who, kind) {
      const keys = { caller: digest(`${who.org}\n${who.id}`), organization: digest(who.org) };
      for (const { scope, limiter } of budgets[kind]) {
        if (!limiter) continue;
        try {
          await limiter.consume(keys[scope]);
        } catch (rejection) {
          if (rejection instanceof RateLimiterRes) {
            return { scope, kind, retryAfterSeconds: Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)) };
          }
          // Redis did not answer: serve the call (Redis never decides an outcome).
          warn("Redis did not answer a rate-limit count", rejection);
          return null;
        }
      }
      return null;
    },
    async close() {
      if (redis) redis.disconnect();
    },
  };
}

/** The protocol's `retry` message for a limit that was reached (§4.3: resend after the wait). */
export function limitedMessage(limited: Limited): string {
  const whose = limited.scope === "caller" ? "this caller's" : "this organization's";
  return `${whose} limit of ${limited.kind} calls is reached; retry in ${limited.retryAfterSeconds} s (rate limit)`;
}
