import { type ChildProcess, spawn } from "node:child_process";
import { freePort } from "./deploy.ts";
import { stopProcess, untilListening } from "./processes.ts";

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
    await untilListening(child, this.port, "redis-server");
  }

  /** Stops the server (SIGTERM, then SIGKILL after 10 s). */
  async down(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (child) await stopProcess(child);
  }
}
