// Reaching a dependency at start-up (issue #13): name the variable and the address, retry with back-off, give up in time.
import type { Logger } from "./logger.ts";

/**
 * The `host:port` addresses of a connection URL (`postgres://user:pw@db:5432/baton` → `db:5432`;
 * NATS's comma-separated list → each), without credentials, path or query: safe to log.
 */
export function addressesOf(url: string, defaultPort: number): string {
  return url
    .split(",")
    .map((one) => {
      const text = one.trim();
      try {
        const u = new URL(text.includes("://") ? text : `x://${text}`);
        const port = u.port || (defaultPort > 0 ? String(defaultPort) : "");
        return port ? `${u.hostname || "localhost"}:${port}` : u.hostname || "localhost";
      } catch {
        return "(not a URL)";
      }
    })
    .join(",");
}

/** Thrown by {@link untilReachable} when a dependency did not answer in time; its message names the variable and the address. */
export class Unreachable extends Error {
  override name = "Unreachable";
}

/**
 * Calls `connect` until it resolves, for at most `timeoutMs` (`BATON_STARTUP_TIMEOUT_SECONDS`),
 * sleeping 0.5 s, doubling to 5 s, between attempts. Each failure is logged as a warning naming
 * `what` (`PostgreSQL`), the `variable` it was configured by (`DATABASE_URL`) and its `address`
 * (`127.0.0.1:5439`, never the credentials). Throws {@link Unreachable} saying the same once the
 * time is up (with `timeoutMs` 0, after the first failure).
 */
export async function untilReachable<T>(
  dependency: { what: string; variable: string; address: string },
  connect: () => Promise<T>,
  options: { timeoutMs: number; log: Logger; sleep?: (ms: number) => Promise<void> },
): Promise<T> {
  const { what, variable, address } = dependency;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const deadline = Date.now() + options.timeoutMs;
  let delay = 500;
  for (let attempt = 1; ; attempt++) {
    try {
      return await connect();
    } catch (error) {
      const reason = reasonOf(error);
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new Unreachable(
          `${what} at ${address} (${variable}) did not answer: ${reason}; gave up after ${attempt} attempt${attempt === 1 ? "" : "s"} in ${Math.round(options.timeoutMs / 1000)} s (BATON_STARTUP_TIMEOUT_SECONDS)`,
        );
      }
      const wait = Math.min(delay, left);
      options.log.warn(
        { dependency: what, variable, address, attempt, err: reason, retryInMs: wait },
        `${what} at ${address} (${variable}) does not answer; retrying`,
      );
      await sleep(wait);
      delay = Math.min(delay * 2, 5_000);
    }
  }
}

/** A failure's reason in a few words: node's error code where there is one (`ECONNREFUSED`), else its message. */
function reasonOf(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code;
    const message = error.message || error.name;
    // AggregateError (several addresses tried) has an empty message and the codes in `errors`.
    if (!error.message && error instanceof AggregateError)
      return error.errors.map((e) => reasonOf(e)).join("; ");
    return code && !message.includes(code) ? `${code}: ${message}` : message;
  }
  return String(error);
}
