import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { EvaluatorReply, ScriptedEvaluator, SeenQuestion } from "@baton/conformance/support";

/**
 * A real HTTP server speaking the OpenAI chat-completions format, started by a test as the check
 * profile's evaluator (profiles/check.md; Baton's `BATON_CHECK_URL`), answering from a script: the
 * stand-in for a model, never a stub of Baton's own interfaces.
 *
 * Which script answers a request is chosen by the submission being checked: its `summary` (in the
 * user message's material, `submission.summary`) carries `[script:<marker>]`. A script lists, per
 * question (matched by a piece of its `ask` in the system message), one reply per attempt; the last
 * repeats. A submission without a marker, or a question its script leaves out, gets an answer that
 * passes any threshold a question can set: yes/no `0.99`, the first choice, the highest level, each
 * with confidence `0.99`.
 */

/** One request as the server received it. */
export interface SeenRequest extends SeenQuestion {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: ChatBody;
}

interface ChatBody {
  model: string;
  messages: { role: string; content: string }[];
  response_format?: { type: string; json_schema?: { name: string; strict: boolean; schema: unknown } };
}

const MARKER = /\[script:([A-Za-z0-9_.-]+)\]/;

/** Starts a scripted evaluator on 127.0.0.1; `env` is the `BATON_CHECK_*` a deployment points at it with. */
export async function startScriptedEvaluator(
  options: { model?: string; timeoutMs?: number } = {},
): Promise<ScriptedEvaluator & { url: string; env: Record<string, string>; stop(): Promise<void> }> {
  const model = options.model ?? "scripted-evaluator-1";
  const scripts = new Map<string, Record<string, EvaluatorReply[]>>();
  const attempts = new Map<string, number>();
  const seen: SeenRequest[] = [];
  const held: { marker: string | null; res: ServerResponse; body: ChatBody }[] = [];
  const server: Server = createServer((req, res) => {
    let raw = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => {
      raw += chunk;
    });
    req.on("end", () => {
      let body: ChatBody;
      try {
        body = JSON.parse(raw) as ChatBody;
      } catch {
        res.writeHead(400).end("not JSON");
        return;
      }
      const system = body.messages?.find((m) => m.role === "system")?.content ?? "";
      const user = body.messages?.find((m) => m.role === "user")?.content ?? "";
      let summary = "";
      try {
        summary = String(
          (JSON.parse(user) as { submission?: { summary?: unknown } }).submission?.summary ?? "",
        );
      } catch {
        // not the material Baton sends: answered by default
      }
      const marker = MARKER.exec(summary)?.[1] ?? null;
      const script = marker === null ? undefined : scripts.get(marker);
      const ask = Object.keys(script ?? {}).find((a) => system.includes(a)) ?? null;
      seen.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers, body, marker, ask });
      const replies = ask === null ? undefined : script?.[ask];
      const key = `${marker}\u0000${ask}`;
      const n = attempts.get(key) ?? 0;
      attempts.set(key, n + 1);
      const reply = replies?.[Math.min(n, replies.length - 1)] ?? { pass: true };
      if (reply === "hold") held.push({ marker, res, body });
      else respond(res, body, reply);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return {
    model,
    url,
    env: {
      BATON_CHECK_URL: url,
      BATON_CHECK_MODEL: model,
      BATON_CHECK_API_KEY: "sk-test-scripted",
      BATON_CHECK_TIMEOUT_MS: String(options.timeoutMs ?? 1500),
    },
    script(marker, replies) {
      scripts.set(marker, replies);
    },
    seen(marker) {
      return seen.filter((s) => s.marker === marker);
    },
    release(marker) {
      for (const h of held.filter((x) => x.marker === marker)) {
        held.splice(held.indexOf(h), 1);
        respond(h.res, h.body, { pass: true });
      }
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The answer that passes any threshold a question of this system message's kind can set. */
function passing(system: string): unknown {
  if (system.includes("Question (choose one)")) {
    const name = /^- ([^:\n]+):/m.exec(system)?.[1] ?? "unknown";
    return { answer: name, confidence: 0.99 };
  }
  if (system.includes("Question (pick a level)")) {
    const levels = [...system.matchAll(/^(\d+): /gm)].map((m) => Number(m[1]));
    return { answer: Math.max(0, ...levels), confidence: 0.99 };
  }
  return { answer: 0.99 };
}

function respond(res: ServerResponse, body: ChatBody, reply: Exclude<EvaluatorReply, "hold">): void {
  if (reply === "hang") return; // held until the client gives up and closes the connection
  if (reply === "down") {
    res.socket?.destroy();
    return;
  }
  if ("status" in reply) {
    res.writeHead(reply.status, { "content-type": "text/plain" }).end(reply.text ?? "unavailable");
    return;
  }
  let content: string;
  if ("pass" in reply) {
    const system = body.messages.find((m) => m.role === "system")?.content ?? "";
    content = JSON.stringify(passing(system));
  } else if ("raw" in reply) content = reply.raw;
  else content = JSON.stringify(reply.json);
  res.writeHead(200, { "content-type": "application/json" }).end(
    JSON.stringify({
      id: "chatcmpl-scripted",
      object: "chat.completion",
      created: 1_790_000_000,
      model: body.model,
      choices: [{ index: 0, message: { role: "assistant", content, refusal: null }, finish_reason: "stop" }],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    }),
  );
}
