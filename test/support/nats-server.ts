import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { connect as tcpConnect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./deploy.ts";

/** The nats-server binary: on PATH, or where Debian's package puts it. */
function natsServerBinary(): string {
  try {
    return execFileSync("sh", ["-c", "command -v nats-server"], { encoding: "utf8" }).trim();
  } catch {
    if (existsSync("/usr/sbin/nats-server")) return "/usr/sbin/nats-server";
    throw new Error("nats-server is not installed (scripts/ensure-services.sh installs it)");
  }
}

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
 * A private `nats-server -js` that a test may stop and restart (issue #8, part 4), never the
 * machine's shared one. It keeps its JetStream store in its own temporary directory across
 * restarts, on the same port, as a restarted production server keeps its disk.
 */
export class PrivateNats {
  private child: ChildProcess | null = null;

  private constructor(
    /** The client port on 127.0.0.1. */
    readonly port: number,
    private readonly storeDir: string,
  ) {}

  /** `nats://127.0.0.1:<port>`. */
  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  /** Starts a server on a free port with a fresh JetStream store; resolves once it accepts clients. */
  static async start(): Promise<PrivateNats> {
    const storeDir = mkdtempSync(join(process.env.BATON_TEST_TMP ?? tmpdir(), "baton-nats-"));
    const server = new PrivateNats(await freePort(), storeDir);
    await server.up();
    return server;
  }

  /** Starts the server (again) on its port and store; resolves once it accepts clients. */
  async up(): Promise<void> {
    if (this.child) return;
    const child = spawn(
      natsServerBinary(),
      ["-a", "127.0.0.1", "-p", String(this.port), "-js", "-sd", this.storeDir],
      { stdio: "ignore" },
    );
    this.child = child;
    const deadline = Date.now() + 30_000;
    while (!(await answers(this.port))) {
      if (child.exitCode !== null) throw new Error(`nats-server exited with ${child.exitCode}`);
      if (Date.now() > deadline) throw new Error(`nats-server did not listen on ${this.port} in 30 s`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Stops the server (SIGTERM, then SIGKILL after 10 s); its store stays for {@link restart}. */
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

  /** Starts the server again on the same port and store. */
  async restart(): Promise<void> {
    await this.down();
    await this.up();
  }

  /** Stops the server and removes its store. */
  async stop(): Promise<void> {
    await this.down();
    rmSync(this.storeDir, { recursive: true, force: true });
  }
}
