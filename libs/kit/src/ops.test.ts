import { describe, expect, it } from "vitest";
import { settingsForLog } from "./env.ts";
import { silentLogger } from "./logger.ts";
import { Health } from "./ops.ts";
import { addressesOf, Unreachable, untilReachable } from "./startup.ts";

/** Issue #13: readiness, start-up retries and the settings a service logs at start. */

describe("Health (/readyz)", () => {
  it("is unready until the service serves, then ready while every check passes, and unready for good once draining", async () => {
    const health = new Health();
    let up = true;
    health.add("postgres", async () => {
      if (!up) throw new Error("connect ECONNREFUSED");
    });
    expect(await health.report()).toMatchObject({
      ready: false,
      checks: { service: expect.stringMatching(/starting/) },
    });
    health.serving();
    expect(await health.report()).toEqual({ ready: true, draining: false, checks: { postgres: "ok" } });
    up = false;
    expect(await health.report()).toEqual({
      ready: false,
      draining: false,
      checks: { postgres: "connect ECONNREFUSED" },
    });
    up = true;
    health.drain();
    expect(await health.report()).toMatchObject({ ready: false, draining: true, checks: { postgres: "ok" } });
  });
});

describe("untilReachable (start-up)", () => {
  it("retries with back-off (0.5 s doubling to 5 s), naming the variable and the address, until it connects", async () => {
    const waits: number[] = [];
    const warnings: object[] = [];
    let attempts = 0;
    const value = await untilReachable(
      { what: "PostgreSQL", variable: "DATABASE_URL", address: "db:5432" },
      async () => {
        if (++attempts < 6)
          throw Object.assign(new Error("connect ECONNREFUSED db:5432"), { code: "ECONNREFUSED" });
        return "connected";
      },
      {
        timeoutMs: 60_000,
        log: { ...silentLogger, warn: (o: object | string) => void warnings.push(o as object) },
        sleep: async (ms) => void waits.push(ms),
      },
    );
    expect(value).toBe("connected");
    expect(waits).toEqual([500, 1_000, 2_000, 4_000, 5_000]);
    expect(warnings[0]).toMatchObject({ variable: "DATABASE_URL", address: "db:5432", attempt: 1 });
  });

  it("gives up once the time is up, saying what, where and which variable", async () => {
    const failing = untilReachable(
      { what: "NATS", variable: "NATS_URL", address: "127.0.0.1:4299" },
      async () => {
        throw new Error("CONNECTION_REFUSED");
      },
      { timeoutMs: 0, log: silentLogger },
    );
    await expect(failing).rejects.toThrow(Unreachable);
    await expect(failing).rejects.toThrow(
      /^NATS at 127\.0\.0\.1:4299 \(NATS_URL\) did not answer: CONNECTION_REFUSED/,
    );
  });

  it("addressesOf keeps host and port only, never credentials", () => {
    expect(addressesOf("postgres://baton:secret@db.internal:6543/baton?sslmode=require", 5432)).toBe(
      "db.internal:6543",
    );
    expect(addressesOf("postgres://db/baton", 5432)).toBe("db:5432");
    expect(addressesOf("nats://a:4222,nats://user:pw@b", 4222)).toBe("a:4222,b:4222");
  });
});

describe("settingsForLog", () => {
  it("hides secrets and URL passwords, keeps the rest", () => {
    expect(
      settingsForLog({
        BATON_SECRET: "0123456789abcdef",
        BATON_SECRET_PREVIOUS: ["old-secret-1"],
        AWS_SECRET_ACCESS_KEY: "k",
        DATABASE_URL: "postgres://baton:pw@db:5432/baton",
        BATON_SMTP_URL: "smtps://user:mailpw@smtp.example.com",
        BATON_PORT: 7800,
        BATON_OPS_PORT: "off",
        AWS_ENDPOINT_URL_S3: "https://key:pw@s3.example.com/",
      }),
    ).toEqual({
      BATON_SECRET: "[hidden]",
      BATON_SECRET_PREVIOUS: ["[hidden]"],
      AWS_SECRET_ACCESS_KEY: "[hidden]",
      DATABASE_URL: "db:5432",
      BATON_SMTP_URL: "smtp.example.com",
      BATON_PORT: 7800,
      BATON_OPS_PORT: "off",
      AWS_ENDPOINT_URL_S3: "https://key:***@s3.example.com/",
    });
  });
});
