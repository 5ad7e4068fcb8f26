import type { Bus, Envelope, Handler, Reply, Subscription } from "./bus.ts";
import { BusUnavailable, runHandler, unwrapReply } from "./bus.ts";

/**
 * The in-process transport for `baton dev` (ARCHITECTURE rule 4). Messages are copied through JSON
 * on the way in and out, exactly as they would be over NATS, so a handler can never share an object
 * with its caller, and a value that would not survive the wire fails here too.
 *
 * A handler in this process cannot lose a request, so an envelope sent again while it is still
 * being handled (`requestWithRetry`'s per-attempt time-out) waits for that handling rather
 * than starting it twice.
 */
export class InProcessBus implements Bus {
  private readonly routes = new Map<string, { handlers: Handler[]; next: number }>();
  /** Envelope id → the reply of its handling still under way. */
  private readonly handling = new Map<string, Promise<Reply>>();
  private readonly listeners = new Set<{
    pattern: RegExp;
    onEvent: (subject: string, data: unknown) => void;
  }>();
  private closed = false;

  async request(subject: string, envelope: Envelope, timeoutMs: number): Promise<unknown> {
    if (this.closed) throw new BusUnavailable(subject, "closed");
    const route = this.routes.get(subject);
    if (!route || route.handlers.length === 0) throw new BusUnavailable(subject, "no_responders");
    let handled = this.handling.get(envelope.id);
    if (!handled) {
      const handler = route.handlers[route.next++ % route.handlers.length] as Handler;
      const wire = JSON.parse(JSON.stringify(envelope)) as unknown;
      const running = runHandler(subject, handler, wire).finally(() => this.handling.delete(envelope.id));
      this.handling.set(envelope.id, running);
      handled = running;
    }
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new BusUnavailable(subject, "timeout")), timeoutMs);
    });
    try {
      const reply = await Promise.race([handled, timeout]);
      return unwrapReply(subject, JSON.parse(JSON.stringify(reply)) as Reply);
    } finally {
      clearTimeout(timer);
    }
  }

  serve(subject: string, handler: Handler): Subscription {
    let route = this.routes.get(subject);
    if (!route) {
      route = { handlers: [], next: 0 };
      this.routes.set(subject, route);
    }
    route.handlers.push(handler);
    return {
      stop: async () => {
        const r = this.routes.get(subject);
        if (r) r.handlers = r.handlers.filter((h) => h !== handler);
      },
    };
  }

  async publish(subject: string, data: unknown): Promise<void> {
    const copy = JSON.parse(JSON.stringify(data)) as unknown;
    for (const l of this.listeners) if (l.pattern.test(subject)) l.onEvent(subject, copy);
  }

  listen(subject: string, onEvent: (subject: string, data: unknown) => void): Subscription {
    const entry = { pattern: subjectPattern(subject), onEvent };
    this.listeners.add(entry);
    return { stop: async () => void this.listeners.delete(entry) };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.routes.clear();
    this.listeners.clear();
  }
}

/** A NATS subject with `*` and `>` wildcards as a regular expression. */
export function subjectPattern(subject: string): RegExp {
  const parts = subject
    .split(".")
    .map((p) => (p === "*" ? "[^.]+" : p === ">" ? ".+" : p.replace(/[$()*+.?[\\\]^{|}]/g, "\\$&")));
  return new RegExp(`^${parts.join("\\.")}$`);
}
