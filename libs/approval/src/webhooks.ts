import type { IncomingMessage, ServerResponse } from "node:http";
import { Webhook } from "standardwebhooks";

/** Request headers as node gives them (lower-case names). */
export type Headers = Record<string, string | string[] | undefined>;

/** What a verified `run.ended` says (the notifier's payload `data`, README "Notifications"). */
export interface RunEnded {
  runId: string;
  process: string | null;
  /** `ended` or `cancelled`. */
  state: string | null;
  /** The finish's outcome (`approved`, `denied`, `skipped`), `rejected`, `failed`, or null when cancelled. */
  outcome: string | null;
}

/** The most request bodies one delivery may hold; the notifier's payloads are a few hundred bytes. */
const MAX_BODY_BYTES = 64 * 1024;

/**
 * Receives Baton's webhooks for the approval client and wakes the requests waiting on a run when its
 * `run.ended` arrives, so a waiting request need not poll. Subscribe the receiver's URL with
 * `baton webhook add <url> --events run.ended` (add `--include-test-runs` for `mode: "test"`) and
 * pass the secret it printed.
 *
 * Every delivery is verified the Standard Webhooks way (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature` over the body, with the subscription's `whsec_…` secret, within five minutes of
 * the receiver's clock) before it is believed; one that does not verify is answered 401 and changes
 * nothing. A webhook is only a wake-up: the client reads the decision with `get_run`. The same event
 * delivered twice (same `webhook-id`) wakes nobody twice. The ids of runs that ended recently are
 * remembered (the last `remember`, default 10,000), so a request that starts waiting after its run's
 * webhook arrived is woken at once.
 */
export class RunEndedReceiver {
  private readonly webhook: Webhook;
  private readonly waiting = new Map<string, Set<() => void>>();
  private readonly ended = new Map<string, RunEnded>();
  private readonly remember: number;

  constructor(secret: string, options: { remember?: number } = {}) {
    this.webhook = new Webhook(secret);
    this.remember = options.remember ?? 10_000;
  }

  /**
   * Takes one delivery: its raw body (exactly as received) and headers. Answers the HTTP status to
   * send: 204 when verified (a `run.ended` wakes the requests waiting on its run; other event types
   * are acknowledged and ignored), 401 when the signature or timestamp does not verify, 400 when the
   * verified body is not a Baton event.
   */
  receive(body: string, headers: Headers): number {
    let payload: unknown;
    try {
      const flat: Record<string, string> = {};
      for (const [k, v] of Object.entries(headers))
        if (v !== undefined) flat[k] = Array.isArray(v) ? v.join(",") : v;
      payload = this.webhook.verify(body, flat);
    } catch {
      return 401;
    }
    const event = payload as { type?: unknown; data?: Record<string, unknown> } | null;
    if (!event || typeof event.type !== "string" || !event.data || typeof event.data !== "object") return 400;
    if (event.type !== "run.ended") return 204;
    const data = event.data;
    if (typeof data.runId !== "string") return 400;
    const text = (v: unknown) => (typeof v === "string" ? v : null);
    this.record({
      runId: data.runId,
      process: text(data.process),
      state: text(data.state),
      outcome: text(data.outcome),
    });
    return 204;
  }

  /**
   * A node `http` request listener that reads the body (up to 64 KiB) and answers with
   * {@link receive}'s status: `createServer(receiver.listener).listen(port)`, or mount it on a path of
   * the runtime's own server.
   */
  readonly listener = (req: IncomingMessage, res: ServerResponse): void => {
    if (req.method !== "POST") {
      res.writeHead(405, { allow: "POST" }).end();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        res.writeHead(413).end();
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => {
      if (res.headersSent) return;
      res.writeHead(this.receive(Buffer.concat(chunks).toString("utf8"), req.headers)).end();
    });
  };

  /** The verified `run.ended` of `runId`, if one arrived (and is still remembered). */
  endedRun(runId: string): RunEnded | undefined {
    return this.ended.get(runId);
  }

  /**
   * Resolves when a verified `run.ended` for `runId` has arrived (at once if it already has). Call
   * the returned `stop` when no longer waiting, so nothing is kept for the run.
   */
  whenEnded(runId: string): { ended: Promise<void>; stop: () => void } {
    if (this.ended.has(runId)) return { ended: Promise.resolve(), stop: () => {} };
    let wake: () => void = () => {};
    const ended = new Promise<void>((resolve) => {
      wake = resolve;
    });
    const set = this.waiting.get(runId) ?? new Set();
    set.add(wake);
    this.waiting.set(runId, set);
    const stop = () => {
      set.delete(wake);
      if (set.size === 0 && this.waiting.get(runId) === set) this.waiting.delete(runId);
    };
    return { ended, stop };
  }

  private record(event: RunEnded): void {
    this.ended.delete(event.runId);
    this.ended.set(event.runId, event);
    // Maps iterate in insertion order: the first key is the oldest.
    while (this.ended.size > this.remember) {
      const oldest = this.ended.keys().next().value;
      if (oldest === undefined) break;
      this.ended.delete(oldest);
    }
    const set = this.waiting.get(event.runId);
    if (!set) return;
    this.waiting.delete(event.runId);
    for (const wake of set) wake();
  }
}
