import { parseDuration } from "@baton/process";

/** The clock as the admin API reports it. */
export interface ClockState {
  /** RFC 3339. */
  now: string;
  manual: boolean;
}

/** The outcome of `baton clock advance`. */
export interface Advanced extends ClockState {
  /** Tick transitions applied for the timers that fell due. */
  transitions: number;
}

/**
 * A duration for `baton clock advance`, in ms: the protocol's own form (§2.4: an integer followed by
 * `m`, `h` or `d`, e.g. `30m`, `4h`, `3d`), so a `wait: 3d` is passed by advancing `3d`. Null when
 * it is not one.
 */
export function advanceDuration(text: string): number | null {
  return parseDuration(text);
}

interface ApiReply<T> {
  ok?: boolean;
  data?: T;
  error?: { code: string; message: string; issues?: string[] };
}

async function call<T>(baseUrl: string, token: string, method: "GET" | "POST", path: string, body?: unknown) {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  let json: ApiReply<T>;
  try {
    json = JSON.parse(text) as ApiReply<T>;
  } catch {
    throw new Error(`${method} ${path}: HTTP ${response.status} ${text.slice(0, 200)}`);
  }
  if (response.status === 401)
    throw new Error(
      `the server refused the token (${text}); mint one with baton token person <email> --operator`,
    );
  if (!json.ok || json.data === undefined) {
    const issues = json.error?.issues?.map((i) => `  ${i}`).join("\n") ?? "";
    throw new Error(`${json.error?.message ?? `HTTP ${response.status}`}${issues ? `\n${issues}` : ""}`);
  }
  return json.data;
}

/** `GET /api/clock`: the server's time and whether it is manual. Needs an operator's token. */
export function clockNow(baseUrl: string, token: string): Promise<ClockState> {
  return call<ClockState>(baseUrl, token, "GET", "/api/clock");
}

/**
 * `baton clock advance`: moves the server's manual clock forward by `ms` and returns once every timer
 * that fell due has been applied. The server answers within its call deadline; when timers are still
 * pending then, this keeps asking it (`ms: 0`) to carry on until `timeoutMs` (wall clock) passes.
 * Throws the server's refusal (`conflict` on a real-time clock) or when the deadline passes.
 */
export async function advanceClock(
  baseUrl: string,
  token: string,
  ms: number,
  timeoutMs = 300_000,
): Promise<Advanced> {
  const deadline = Date.now() + timeoutMs;
  let transitions = 0;
  let step = ms;
  for (;;) {
    const r = await call<ClockState & { transitions?: number; pending?: number }>(
      baseUrl,
      token,
      "POST",
      "/api/clock/advance",
      { ms: step },
    );
    transitions += r.transitions ?? 0;
    if (!r.pending) return { now: r.now, manual: r.manual, transitions };
    if (Date.now() > deadline)
      throw new Error(`the clock is at ${r.now} but ${r.pending} timers are still being applied`);
    step = 0;
    if (!r.transitions) await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
