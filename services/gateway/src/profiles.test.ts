import { CheckConfigSchema, checkSettings } from "@baton/check";
import type { FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { postMcp, testGateway, testIssuer } from "../test/gateway-harness.ts";
import { GatewayConfigSchema } from "./config.ts";

/**
 * `describe` (tools.md describe; §8; check.md preamble and §5): `parallel-1` always, `check-1` only
 * while an evaluator is configured by `BATON_CHECK_*`, and the check limits of the environment in
 * `describe.limits` — the whole gateway, without a socket.
 */

const PUBLIC_URL = "https://baton.example.com";
let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function describeWith(env: Record<string, string>) {
  const issuer = await testIssuer(PUBLIC_URL);
  const token = await issuer.sign("a_one", { org: "default", kind: "agent" });
  app = await testGateway({
    publicUrl: PUBLIC_URL,
    verifier: issuer.verifier,
    check: checkSettings(CheckConfigSchema.parse(env)),
  });
  const response = await postMcp(app, token, {
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name: "describe", arguments: {} },
  });
  return JSON.parse(response.body).result.structuredContent.data;
}

describe("describe.profiles and describe.limits from BATON_CHECK_* (§8; check.md preamble, §5)", () => {
  it("without an evaluator: parallel-1 only, the server's default check limits", async () => {
    const d = await describeWith({});
    expect(d.profiles).toEqual(["parallel-1"]);
    expect(d.limits).toEqual({
      runDataBytes: 262_144,
      checkPass: 0.9,
      checkFail: null,
      checkConfidence: 0.8,
      checkStateBytes: 65_536,
    });
  });

  it("with an evaluator: check-1 too, and the limits the environment sets", async () => {
    const d = await describeWith({
      BATON_CHECK_URL: "http://127.0.0.1:11434/v1",
      BATON_CHECK_MODEL: "llama3.1",
      BATON_CHECK_PASS: "0.85",
      BATON_CHECK_FAIL: "0.4",
      BATON_CHECK_CONFIDENCE: "0.7",
      BATON_CHECK_STATE_BYTES: "32768",
    });
    expect(d.profiles).toEqual(["parallel-1", "check-1"]);
    expect(d.limits).toMatchObject({
      checkPass: 0.85,
      checkFail: 0.4,
      checkConfidence: 0.7,
      checkStateBytes: 32_768,
    });
  });

  it("the gateway's environment refuses half an evaluator and a fail threshold not below pass, listing each", () => {
    const base = {
      NATS_URL: "nats://127.0.0.1:4222",
      BATON_SECRET: "0123456789abcdef0123",
      BATON_PUBLIC_URL: PUBLIC_URL,
      BATON_DEV_ISSUER_FILE: "/tmp/issuer.json",
      BATON_BLOB_DIR: "/tmp/files",
    };
    const parsed = GatewayConfigSchema.safeParse({
      ...base,
      BATON_CHECK_URL: "http://127.0.0.1:11434/v1",
      BATON_CHECK_FAIL: "0.95",
    });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((i) => `${i.path.join(".")}: ${i.message}`).sort()).toEqual([
      "BATON_CHECK_FAIL: must be below BATON_CHECK_PASS (0.9)",
      "BATON_CHECK_MODEL: required with BATON_CHECK_URL",
    ]);
  });
});
