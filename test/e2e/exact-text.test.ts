import { randomUUID } from "node:crypto";
import { type McpSession, type Result, refused } from "@baton/conformance/mcp";
import type { ToolName } from "@baton/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { processFolder } from "../support/clock.ts";
import { DEPLOYMENTS, type Deployment } from "../support/deploy.ts";

/**
 * Issue #8 part 2: a value Baton cannot store or hash exactly is `invalid` with an issue naming its
 * path, decided by the gateway before anything crosses the bus or is written (§4.3: `retry` is for
 * transient server state, which a later identical call can get past; a lone surrogate or a NUL
 * never goes away, so `retry` would loop a compliant agent for ever). Over a real MCP client and the
 * admin API, against `baton dev` and the services on NATS and PostgreSQL.
 *
 * A lone UTF-16 surrogate (`\ud800` as a JSON escape: the MCP SDK's `JSON.stringify` sends it so) has
 * no UTF-8 form, so canonical JSON cannot hash it and PostgreSQL cannot store it; NUL (`\u0000`) is
 * refused by PostgreSQL's `text` and `jsonb`.
 */

const TEXT_INPUT = `
description: Takes a link; used to test what text a request may carry.
inputs:
  url: string
steps:
  - id: look
    agent: Look at the link.
  - id: done
    finish: done
`;

// biome-ignore lint/suspicious/noExplicitAny: tests read response shapes dynamically
type Data = any;

/** An issue for `path`, saying what is wrong with its text. */
const about = (path: string, what: "lone surrogate" | "NUL") =>
  new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: .*${what}`);

/** `invalid`, with an issue about `path`: never `retry` (§4.3). */
function expectRefused(result: Result, path: string, what: "lone surrogate" | "NUL") {
  const error = refused(result, "invalid");
  if (!error) return;
  expect(error.issues, JSON.stringify(error.issues)).toEqual(
    expect.arrayContaining([expect.stringMatching(about(path, what))]),
  );
}

describe.each(DEPLOYMENTS)("text Baton cannot store is invalid at the edge — %s", (_label, start) => {
  let baton: Deployment;
  let agent: McpSession;
  let operator: McpSession;
  let operatorToken: string;
  let runId: string;
  let base: string;

  beforeAll(async () => {
    baton = await start();
    await baton.publish(processFolder("text-input", TEXT_INPUT));
    agent = await baton.session({ kind: "agent", id: "a_text" });
    operator = await baton.session({ kind: "person", id: "ops@example.com", operator: true });
    operatorToken = await baton.token({ kind: "person", id: "ops@example.com", operator: true });
    base = baton.url.replace(/\/mcp$/, "");
    const started = await agent.ok("start_run", {
      process: "text-input",
      inputs: { url: "https://example.com/" },
    });
    runId = started.run.id;
  });
  afterAll(async () => {
    await Promise.all([agent?.close(), operator?.close()]);
    await baton?.stop();
  });

  it("§4.3 issue #8 case: start_run with a lone surrogate in an input value is invalid naming inputs.url, every time, never retry", async () => {
    const args = {
      process: "text-input",
      inputs: { url: "https://example.com/\ud800" },
      requestId: randomUUID(),
    };
    for (let i = 0; i < 2; i++)
      expectRefused(await agent.callOnce("start_run", args), "inputs.url", "lone surrogate");
    // Nothing was recorded (§4: a call that failed is not recorded), so the same requestId with a
    // well-formed value starts the run.
    const fixed = await agent.callOnce("start_run", { ...args, inputs: { url: "https://example.com/" } });
    expect(fixed.ok, JSON.stringify(fixed)).toBe(true);
  });

  it("§4.3 issue #8 case: a requestId holding a lone surrogate is invalid naming requestId, never retry", async () => {
    const args = {
      process: "text-input",
      inputs: { url: "https://example.com/" },
      requestId: `req-\udc00-${randomUUID()}`,
    };
    for (let i = 0; i < 2; i++)
      expectRefused(await agent.callOnce("start_run", args), "requestId", "lone surrogate");
  });

  it("§4.3 every string of every tool's arguments — values, keys, ids, names, filters, notes, reasons, summaries, event names and data, file names — is checked", async () => {
    const requestId = () => randomUUID();
    const cases: [McpSession, ToolName, Record<string, unknown>, string, "lone surrogate" | "NUL"][] = [
      [
        agent,
        "start_run",
        { process: "text-input", inputs: { url: "a\u0000b" }, requestId: requestId() },
        "inputs.url",
        "NUL",
      ],
      [
        agent,
        "start_run",
        { process: "text-input", inputs: { url: "x", "k\udfff": 1 }, requestId: requestId() },
        "inputs.k\\udfff",
        "lone surrogate",
      ],
      [
        agent,
        "start_run",
        { process: "text-\ud800input", inputs: { url: "x" }, requestId: requestId() },
        "process",
        "lone surrogate",
      ],
      [agent, "list_processes", { cursor: "\ud800" }, "cursor", "lone surrogate"],
      [agent, "get_run", { runId: `${runId}\u0000` }, "runId", "NUL"],
      [agent, "get_work", { process: "text-input\udbff" }, "process", "lone surrogate"],
      [agent, "list_runs", { inputs: { url: "https://example.com/\ud800" } }, "inputs.url", "lone surrogate"],
      [agent, "list_runs", { inputs: { "u\u0000rl": "x" } }, "inputs.u\\u0000rl", "NUL"],
      [agent, "claim", { runId, stepId: "look\ud800", requestId: requestId() }, "stepId", "lone surrogate"],
      [
        agent,
        "submit",
        { token: "t", output: { note: "x\ud800" }, summary: "s", requestId: requestId() },
        "output.note",
        "lone surrogate",
      ],
      [
        agent,
        "submit",
        { token: "t", output: {}, summary: "did \udc00 it", requestId: requestId() },
        "summary",
        "lone surrogate",
      ],
      [
        agent,
        "submit",
        {
          token: "t",
          output: {},
          summary: "s",
          evidence: [{ kind: "link", ref: "https://x/\ud800" }],
          requestId: requestId(),
        },
        "evidence[0].ref",
        "lone surrogate",
      ],
      [agent, "escalate", { token: "t", note: "stuck \u0000", requestId: requestId() }, "note", "NUL"],
      [
        agent,
        "renew",
        { token: "t", progress: "half \ud800", requestId: requestId() },
        "progress",
        "lone surrogate",
      ],
      [
        operator,
        "decide",
        {
          runId,
          workItemId: "w\ud800",
          snapshot: "s",
          decision: "failed",
          note: "n",
          requestId: requestId(),
        },
        "workItemId",
        "lone surrogate",
      ],
      [
        operator,
        "cancel",
        { runId, reason: "done \ud800", requestId: requestId() },
        "reason",
        "lone surrogate",
      ],
      [
        agent,
        "upload",
        { fileName: "a\ud800.txt", contentType: "text/plain", contentBase64: "aGk=", requestId: requestId() },
        "fileName",
        "lone surrogate",
      ],
      [agent, "send_event", { runId, name: "ping\ud800", requestId: requestId() }, "name", "lone surrogate"],
      [
        agent,
        "send_event",
        { runId, name: "ping", data: { deep: [{ "\ud800": 1 }] }, requestId: requestId() },
        "data.deep[0].\\ud800",
        "lone surrogate",
      ],
      [
        agent,
        "send_event",
        { runId, name: "ping", data: { text: "a\u0000" }, requestId: requestId() },
        "data.text",
        "NUL",
      ],
    ];
    for (const [session, tool, args, path, what] of cases) {
      const result = await session.callOnce(tool, args);
      expectRefused(result, path, what);
    }
    // The server keeps serving, and the run the refusals named is unchanged.
    const run = await agent.ok("get_run", { runId });
    expect(run.run.state).toBe("active");
    expect(run.data.inputs).toEqual({ url: "https://example.com/" });
  });

  it("§2.3 well-formed text outside the Basic Multilingual Plane is stored and returned exactly", async () => {
    const url = "https://example.com/\u{1F600}/\u{10FFFF}/\u00e9";
    const started = await agent.ok("start_run", { process: "text-input", inputs: { url } });
    const read = await agent.ok("get_run", { runId: started.run.id });
    expect(read.data.inputs.url).toBe(url);
  });

  /** An admin API call as an operator: the HTTP status and the `{ ok, data | error }` body. */
  const admin = async (
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: Data }> => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${operatorToken}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: await response.json() };
  };

  it("§4.3 §7 the admin API refuses text it cannot store as invalid naming where it is: process source (line and column), bindings, draft ids, clock requestIds", async () => {
    const source = `---\nname: text-input\n${TEXT_INPUT.trim()}\n---\n\n# Text\u0000input\n`;
    const imported = await admin("POST", "/api/processes", { folderName: "text-input", source });
    expect(imported.status).toBe(400);
    expect(imported.body.error.code).toBe("invalid");
    expect(imported.body.error.issues).toEqual([
      expect.stringMatching(/^source: .*NUL.* at line 13, column 7/),
    ]);

    const draft = await admin("POST", "/api/processes", {
      folderName: "text-input",
      source: `---\nname: text-input\n${TEXT_INPUT.trim()}\n---\n\n# Text input\n`,
    });
    expect(draft.status).toBe(200);
    const bound = await admin("PUT", `/api/drafts/${draft.body.data.draftId}/bindings`, {
      bindings: { "role\ud800": "g\u0000" },
    });
    expect(bound.status).toBe(400);
    expect(bound.body.error).toMatchObject({
      code: "invalid",
      issues: [
        expect.stringMatching(about("bindings.role\\ud800", "lone surrogate")),
        expect.stringMatching(about("bindings.role\\ud800", "NUL")),
      ],
    });

    for (const [method, path] of [
      ["GET", "/api/drafts/d_%00"],
      ["POST", "/api/drafts/d_%00/publish"],
      ["GET", "/api/drafts/d_%ED%A0%80"],
    ] as const) {
      const response = await admin(method, path);
      expect(response.status, `${method} ${path}`).toBe(400);
      expect(response.body.error.code, `${method} ${path}`).toBe("invalid");
    }

    const clock = await admin("POST", "/api/clock/advance", { ms: 0, requestId: "tick\ud800" });
    expect(clock.status).toBe(400);
    expect(clock.body.error).toMatchObject({
      code: "invalid",
      issues: [expect.stringMatching(about("requestId", "lone surrogate"))],
    });
  });
});
