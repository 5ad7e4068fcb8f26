import { type ChildProcess, spawn } from "node:child_process";
import { connect as tcpConnect } from "node:net";
import { freePort } from "./deploy.ts";

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tcpConnect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/**
 * A private `redis-server` on a port of its own that a test may stop and start again (issue #12:
 * the gateway serves while Redis is down), never the machine's shared one. Nothing is persisted.
 */
export class PrivateRedis {
  private child: ChildProcess | null = null;

  private constructor(readonly port: number) {}

  /** `redis://127.0.0.1:<port>`. */
  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts a server on a free port; resolves once it accepts clients. */
  static async start(): Promise<PrivateRedis> {
    const server = new PrivateRedis(await freePort());
    await server.up();
    return server;
  }

  /** Starts the server (again) on its port; resolves once it accepts clients. */
  async up(): Promise<void> {
    if (this.child) return;
    const child = spawn(
      "redis-server",
      ["--port", String(this.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
      { stdio: "ignore" },
    );
    this.child = child;
    const deadline = Date.now() + 30_000;
    while (!(await answers(this.port))) {
      if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`);
      if (Date.now() > deadline) throw new Error(`redis-server did not listen on ${this.port} in 30 s`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Stops the server (SIGTERM, then SIGKILL after 10 s). */
  async down(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      child.once("exit", () => {
        clearTimeout(timer);
        resolve();
      });
      child.kill("SIGTERM");
    });
  }
}
