import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { devToken } from "../../services/cli/src/token.ts";
import { REPO } from "../support/deploy.ts";

/**
 * `baton dev` "stops cleanly on SIGINT/SIGTERM" (README; issue #2). Found by the races review: a
 * SIGTERM while calls were in flight took 72 s to exit — Fastify closes only the keep-alive
 * connections idle when it starts closing, and waits out its 72 s keep-alive on the rest — and the
 * data directory stayed locked all that time. A call in flight is answered, and the process exits as
 * soon as it is.
 */
describe("baton dev stops cleanly while a call is in flight (README)", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "baton-stop-"));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it("answers the call, closes its keep-alive connection and exits, well inside the 72 s keep-alive", async () => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "services/cli/src/main.ts", "dev", "--port", "0", "--data-dir", dataDir],
      { cwd: REPO, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, BATON_LOG_LEVEL: "warn" } },
    );
    const exited = new Promise<{ code: number | null; at: number }>((resolve) =>
      child.once("exit", (code) => resolve({ code, at: Date.now() })),
    );
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    try {
      const url = await new Promise<URL>((resolve, reject) => {
        let out = "";
        child.stdout.on("data", (d: Buffer) => {
          out += d.toString();
          const m = /MCP endpoint: (\S+)/.exec(out);
          if (m) resolve(new URL(m[1] as string));
        });
        child.once("exit", () => reject(new Error(`baton dev exited early:\n${stderr}`)));
      });
      const token = await devToken(dataDir, {
        sub: "a_stop",
        org: "default",
        kind: "agent",
        groups: [],
        roles: [],
      });

      // A request whose headers the server has parsed (it answers 100 Continue) and whose body is
      // still on its way: in flight, on a keep-alive connection.
      const body = JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "describe", arguments: {} },
      });
      const socket: Socket = connect(Number(url.port), url.hostname);
      let received = "";
      socket.on("data", (d: Buffer) => {
        received += d.toString();
      });
      const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
      const until = async (test: () => boolean, what: string) => {
        const deadline = Date.now() + 30_000;
        while (!test()) {
          if (Date.now() > deadline) throw new Error(`never ${what}; got:\n${received}\n${stderr}`);
          await new Promise((r) => setTimeout(r, 20));
        }
      };
      socket.write(
        [
          "POST /mcp HTTP/1.1",
          `Host: ${url.host}`,
          `Authorization: Bearer ${token}`,
          "Content-Type: application/json",
          "Accept: application/json, text/event-stream",
          `Content-Length: ${Buffer.byteLength(body)}`,
          "Expect: 100-continue",
          "",
          "",
        ].join("\r\n"),
      );
      await until(() => received.includes("100 Continue"), "answered 100 Continue");

      child.kill("SIGTERM");
      await until(() => stderr.includes("SIGTERM, stopping"), "began to stop");
      await new Promise((r) => setTimeout(r, 200));
      const sentAt = Date.now();
      socket.write(body);

      await until(() => received.includes('"structuredContent"'), "answered the call in flight");
      expect(received).toMatch(/HTTP\/1\.1 200 OK/);
      await closed;
      const { code, at } = await exited;
      expect(code).toBe(0);
      // Before the fix this took 72 s (the keep-alive timeout); a loaded machine needs a few seconds, far from either.
      expect(at - sentAt).toBeLessThan(60_000);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  }, 120_000);
});
