import type { TokenClaims } from "@baton/auth";
import type { BlobStore } from "@baton/blob";
import { InProcessBus, SUBJECTS } from "@baton/bus";
import { TOOL_NAMES, type ToolName } from "@baton/protocol";
import fc from "fast-check";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postMcp, testGateway, testIssuer } from "../test/gateway-harness.ts";
import { argumentProblems, parseBody } from "./body.ts";

/**
 * Issue #8 part 2, as a property of the whole gateway (HTTP, MCP, argument checks, routing) without
 * a socket: a lone UTF-16 surrogate or a NUL placed anywhere in any tool's arguments — any string
 * value, any key, at any depth — is answered `invalid` with an issue naming its path (§4.3: never
 * `retry`, which would loop a compliant agent for ever), and nothing crosses the bus or reaches the
 * file store. The services behind the bus answer every call `ok`, so a string the check missed would
 * show as a success, not as a refusal. The same arguments without the bad character raise no problem.
 */

const PARTITIONS = 4;
const PUBLIC_URL = "http://gateway.test";

let app: FastifyInstance;
let token: string;
const crossed: string[] = [];
const stored: string[] = [];

beforeAll(async () => {
  const issuer = await testIssuer(PUBLIC_URL);
  const claims: Omit<TokenClaims, "sub"> = {
    org: "default",
    kind: "person",
    groups: [],
    roles: ["operator"],
  };
  token = await issuer.sign("ops@example.com", claims);
  const bus = new InProcessBus();
  const subjects: string[] = [SUBJECTS.registry, SUBJECTS.evidence, SUBJECTS.engineRead];
  for (let p = 0; p < PARTITIONS; p++) subjects.push(SUBJECTS.engineWrite(p));
  for (const subject of subjects) {
    bus.serve(subject, async (envelope) => {
      crossed.push(envelope.type);
      return { ok: true, data: {} };
    });
  }
  const blobs: BlobStore = {
    kind: "local",
    location: "nowhere",
    async put(key) {
      stored.push(key);
      return { etag: null, written: true };
    },
    get: async () => null,
    head: async () => null,
    list: async () => ({ objects: [], cursor: null }),
    delete: async () => {},
    presign: async () => null,
    check: async () => {},
  };
  app = await testGateway({
    bus,
    blobs,
    publicUrl: PUBLIC_URL,
    verifier: issuer.verifier,
    partitions: PARTITIONS,
  });
});
afterAll(async () => {
  await app?.close();
});

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const text = fc.string({ unit: "grapheme", minLength: 1, maxLength: 12 });
const key = fc.string({ unit: "grapheme", maxLength: 8 }).filter((k) => k !== "__proto__");
const { json } = fc.letrec<{ json: Json }>((tie) => ({
  json: fc.oneof(
    { maxDepth: 3 },
    fc.string({ unit: "grapheme", maxLength: 10 }),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("json"), { maxLength: 3 }),
    fc.dictionary(key, tie("json"), { maxKeys: 3, noNullPrototype: true }),
  ),
}));
const object = fc.dictionary(key, json, { maxKeys: 4, noNullPrototype: true });
const evidence = fc.array(fc.record({ kind: fc.constantFrom("file", "link"), ref: text }), { maxLength: 2 });

/** Arguments of every tool, shaped as tools.md gives them, with generated text and free-form data. */
const ARGS: Record<ToolName, fc.Arbitrary<Record<string, Json>>> = {
  describe: fc.constant({}),
  list_processes: fc.record({ cursor: text }),
  start_run: fc.record({
    process: text,
    inputs: object,
    mode: fc.constantFrom("live", "test"),
    requestId: text,
  }),
  get_run: fc.record({ runId: text }),
  get_work: fc.record({ cursor: text, process: text }),
  claim: fc.record({ runId: text, stepId: text, requestId: text }),
  submit: fc.record({
    token: text,
    output: object,
    evidence,
    summary: text,
    next: text,
    reason: text,
    requestId: text,
  }),
  escalate: fc.record({ token: text, note: text, requestId: text }),
  decide: fc.record({
    runId: text,
    workItemId: text,
    snapshot: text,
    decision: fc.constantFrom("completed", "approved", "rejected", "returned", "failed"),
    output: object,
    evidence,
    summary: text,
    next: text,
    reason: text,
    note: text,
    requestId: text,
  }),
  cancel: fc.record({ runId: text, reason: text, requestId: text }),
  renew: fc.record({ token: text, progress: text, requestId: text }),
  upload: fc.record({
    fileName: text,
    contentType: text,
    contentBase64: fc.constant("aGk="),
    requestId: text,
  }),
  send_event: fc.record({ runId: text, name: text, data: object, requestId: text }),
  list_runs: fc.record({ process: text, state: fc.constantFrom("active", "waiting"), inputs: object }),
};

/** A string of the arguments: a value, or a key (renamed in place). `path` as issues write it. */
interface Slot {
  kind: "value" | "key";
  path: string;
  /** For a key: the path of the object holding it. */
  parent: string;
  text: string;
  replace: (next: string) => void;
}

/** Every string value and key of `value` (an object or array), with a way to replace it. */
function slots(value: Json, path: string, out: Slot[] = []): Slot[] {
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      const at = `${path}[${i}]`;
      if (typeof item === "string")
        out.push({
          kind: "value",
          path: at,
          parent: path,
          text: item,
          replace: (s) => {
            value[i] = s;
          },
        });
      else if (item !== null && typeof item === "object") slots(item, at, out);
    });
    return out;
  }
  if (value === null || typeof value !== "object") return out;
  for (const [k, item] of Object.entries(value)) {
    const at = path ? `${path}.${k}` : k;
    out.push({
      kind: "key",
      path: at,
      parent: path,
      text: k,
      replace: (s) => {
        // Rename in place, keeping the order of the keys.
        const entries = Object.entries(value).map(([name, v]) => [name === k ? s : name, v] as const);
        for (const name of Object.keys(value)) delete value[name];
        for (const [name, v] of entries) value[name] = v;
      },
    });
    if (typeof item === "string")
      out.push({
        kind: "value",
        path: at,
        parent: path,
        text: item,
        replace: (s) => {
          value[k] = s;
        },
      });
    else if (item !== null && typeof item === "object") slots(item, at, out);
  }
  return out;
}

const hex = (code: number) => `\\u${code.toString(16).padStart(4, "0")}`;

/** One generated case: a tool, its arguments, where the bad character goes, and which one. */
const cases = fc.constantFrom(...TOOL_NAMES).chain((tool) =>
  fc.record({
    tool: fc.constant(tool),
    args: ARGS[tool],
    slot: fc.nat(),
    offset: fc.nat(),
    code: fc.oneof(fc.integer({ min: 0xd800, max: 0xdfff }), fc.constant(0)),
  }),
);

const call = (tool: ToolName, args: Json) =>
  JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: tool, arguments: args } });

describe("the gateway refuses text Baton cannot store, wherever it is (issue #8, §4.3)", () => {
  it("§4.3 a lone surrogate or NUL anywhere in any tool's arguments is invalid with its path; nothing crosses the bus; never retry, never a crash", async () => {
    await fc.assert(
      fc.asyncProperty(cases, async ({ tool, args: generated, slot, offset, code }) => {
        // fast-check may show a generated value again while shrinking: change a copy only.
        const args = structuredClone(generated);
        // Well-formed arguments raise no text problem.
        expect(argumentProblems(parseBody(call(tool, args)))).toEqual([]);
        const all = slots(args, "");
        // `describe` takes no arguments: the bad character goes into a key of its own.
        if (all.length === 0) args.note = "x";
        const target = (all.length === 0 ? slots(args, "") : all)[slot % Math.max(all.length, 1)] as Slot;
        const points = Array.from(target.text);
        const at = offset % (points.length + 1);
        const bad = String.fromCharCode(code);
        target.replace([...points.slice(0, at), bad, ...points.slice(at)].join(""));
        const shown = [...points.slice(0, at), hex(code), ...points.slice(at)].join("");
        const path =
          target.kind === "key" ? (target.parent ? `${target.parent}.${shown}` : shown) : target.path;
        const what = code === 0 ? "NUL" : "lone surrogate";

        const before = crossed.length + stored.length;
        const response = await postMcp(app, token, call(tool, args));
        expect(response.statusCode).toBe(200);
        const result = response.json().result.structuredContent;
        expect(result.ok).toBe(false);
        expect(result.error.code).toBe("invalid");
        const says = `${path}: ${target.kind === "key" ? "key contains" : "contains"} `;
        const issues = result.error.issues as string[];
        expect(
          issues.some((i) => i.startsWith(says) && i.includes(what)),
          `${says}… ${what} in ${JSON.stringify(issues)}`,
        ).toBe(true);
        expect(crossed.length + stored.length).toBe(before);
      }),
      { numRuns: 400 },
    );
  });
});
