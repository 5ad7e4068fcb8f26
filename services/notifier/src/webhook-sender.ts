// One webhook attempt over HTTP(S), signed the Standard Webhooks way, to the address just checked (issue #11).
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { Webhook } from "standardwebhooks";
import { checkUrl, type Resolver, resolveTarget, type TargetPolicy } from "./targets.ts";

/** The outcome of one attempt (webhook or mail). */
export interface AttemptResult {
  /** `ok` (2xx), `gone` (410: disable the subscription), `refused` (a forbidden target), or `failed`. */
  status: "ok" | "failed" | "gone" | "refused";
  /** The HTTP status (or SMTP reply code); null when no answer came. */
  responseCode: number | null;
  /** What went wrong, in words; null on success. */
  error: string | null;
}

/** One signed request. */
export interface WebhookRequest {
  url: string;
  /** `webhook-id`: the same on every attempt of one (event, subscription), so receivers can de-duplicate. */
  webhookId: string;
  /** The JSON body, `{ type, timestamp, data }`. */
  body: string;
  /** The subscription's `whsec_…` secret. */
  secret: string;
  /**
   * `webhook-timestamp`, wall-clock time of this attempt: receivers check it against their own clock
   * to refuse replays, so it is never the injected clock (which a test may have moved days ahead).
   */
  sentAt: Date;
}

/** The body of an answer is read up to this many bytes (only its status matters). */
const MAX_ANSWER_BYTES = 64 * 1024;

/** A lookup that answers with one address already resolved and checked, whatever is asked. */
function pinned(address: string, family: 4 | 6): LookupFunction {
  return ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  }) as unknown as LookupFunction;
}

/**
 * Sends one attempt: checks the URL and resolves its host under `policy` (every address must be
 * allowed), then POSTs to exactly that address with the `webhook-id`, `webhook-timestamp` and
 * `webhook-signature` headers. Redirects are not followed (a 3xx is a failure, so a receiver cannot
 * bounce the request to an address the check would refuse). The whole attempt — connect, send,
 * answer — ends after `timeoutMs`. Never throws.
 */
export async function sendWebhook(
  request: WebhookRequest,
  policy: TargetPolicy,
  resolver: Resolver,
  timeoutMs: number,
): Promise<AttemptResult> {
  const checked = checkUrl(request.url, policy);
  if ("problem" in checked) return { status: "refused", responseCode: null, error: checked.problem };
  const target = await resolveTarget(checked.host, policy, resolver);
  if ("problem" in target)
    return { status: target.transient ? "failed" : "refused", responseCode: null, error: target.problem };
  let signature: string;
  try {
    signature = new Webhook(request.secret).sign(request.webhookId, request.sentAt, request.body);
  } catch (error) {
    return { status: "failed", responseCode: null, error: `cannot sign: ${String(error)}` };
  }
  const client = checked.url.protocol === "https:" ? https : http;
  return new Promise<AttemptResult>((resolve) => {
    let settled = false;
    const done = (result: AttemptResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const req = client.request(
      checked.url,
      {
        method: "POST",
        agent: false,
        lookup: pinned(target.address, target.family),
        headers: {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(request.body),
          "user-agent": "Baton-Notifier",
          "webhook-id": request.webhookId,
          "webhook-timestamp": String(Math.floor(request.sentAt.getTime() / 1000)),
          "webhook-signature": signature,
        },
      },
      (res) => {
        let read = 0;
        res.on("data", (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_ANSWER_BYTES) res.destroy();
        });
        const finish = () => {
          const code = res.statusCode ?? 0;
          if (code >= 200 && code < 300) done({ status: "ok", responseCode: code, error: null });
          else if (code === 410)
            done({ status: "gone", responseCode: code, error: "410 Gone: the subscription is disabled" });
          else done({ status: "failed", responseCode: code, error: `answered ${code}` });
        };
        res.on("end", finish);
        res.on("close", finish);
        res.on("error", finish);
      },
    );
    const timer = setTimeout(() => {
      done({ status: "failed", responseCode: null, error: `no answer within ${timeoutMs} ms` });
      req.destroy();
    }, timeoutMs);
    req.on("error", (error: NodeJS.ErrnoException) =>
      done({ status: "failed", responseCode: null, error: error.code ?? error.message }),
    );
    req.end(request.body);
  });
}
