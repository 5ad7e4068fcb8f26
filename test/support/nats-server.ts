import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { NatsConnection } from "nats";
import { freePort } from "./deploy.ts";
import { stopProcess, untilListening } from "./processes.ts";

/** The nats-server binary: on PATH, or where Debian's package puts it. */
function natsServerBinary(): string {
  try {
    return execFileSync("sh", ["-c", "command -v nats-server"], { encoding: "utf8" }).trim();
  } catch {
    if (existsSync("/usr/sbin/nats-server")) return "/usr/sbin/nats-server";
    throw new Error("nats-server is not installed (scripts/ensure-services.sh installs it)");
  }
}

/**
 * How to run nats-server so that it ends with the test process that started it, even when that
 * process is killed (a worker ended on a time-out) and never runs its `afterAll`: through `setpriv
 * --pdeathsig KILL` (util-linux) where there is one. It execs the server, so the child's pid is the
 * server's and {@link PrivateNats.down}'s signals reach it.
 */
function natsServerCommand(args: string[]): [string, string[]] {
  const server = natsServerBinary();
  for (const setpriv of ["/usr/bin/setpriv", "/bin/setpriv"]) {
    if (existsSync(setpriv)) return [setpriv, ["--pdeathsig", "KILL", server, ...args]];
  }
  return [server, args];
}

/**
 * A private `nats-server -js` that a test may stop and restart (issue #8, part 4), never the
 * machine's shared one. It keeps its JetStream store in its own temporary directory across
 * restarts, on the same port, as a restarted production server keeps its disk.
 */
export class PrivateNats {
  private child: ChildProcess | null = null;
  /** How each server process this test did not stop ended, e.g. `exit 1` (a crash is a finding). */
  private readonly unexpected: string[] = [];

  private constructor(
    /** The client port on 127.0.0.1. */
    readonly port: number,
    /** The server's own folder: its JetStream store (`store/`), its log (`nats.log`) and its output (`output.log`: a panic's trace). */
    private readonly dir: string,
  ) {}

  private get storeDir(): string {
    return join(this.dir, "store");
  }

  private get logFile(): string {
    return join(this.dir, "nats.log");
  }

  private get outputFile(): string {
    return join(this.dir, "output.log");
  }

  /** `nats://127.0.0.1:<port>`. */
  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  /** Starts a server on a free port with a fresh JetStream store; resolves once it accepts clients. */
  static async start(): Promise<PrivateNats> {
    const dir = mkdtempSync(join(process.env.BATON_TEST_TMP ?? tmpdir(), "baton-nats-"));
    const server = new PrivateNats(await freePort(), dir);
    await server.up();
    return server;
  }

  /** Starts the server (again) on its port and store; resolves once it accepts clients. */
  async up(): Promise<void> {
    if (this.child) return;
    const output = openSync(this.outputFile, "a");
    const [command, args] = natsServerCommand([
      "-a",
      "127.0.0.1",
      "-p",
      String(this.port),
      "-js",
      "-sd",
      this.storeDir,
      "-l",
      this.logFile,
    ]);
    const child = spawn(command, args, { stdio: ["ignore", output, output] });
    closeSync(output);
    this.child = child;
    child.once("exit", (code, signal) => {
      // Stopped by this test ({@link down}) or not: a server that ends by itself is a finding.
      if (this.child === child) this.unexpected.push(signal ? `signal ${signal}` : `exit ${code}`);
    });
    await untilListening(child, this.port, "nats-server");
  }

  /** Stops the server (SIGTERM, then SIGKILL after 10 s); its store stays for {@link restart}. */
  async down(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (child) await stopProcess(child);
  }

  /** Starts the server again on the same port and store. */
  async restart(): Promise<void> {
    await this.down();
    await this.up();
  }

  /**
   * How the server ended each time it ended without {@link down} (empty when it never did), the end
   * of its log, and the start of what it printed (a panic's trace): for a test's failure message.
   */
  report(lines = 40): { unexpectedExits: string[]; log: string; output: string } {
    const read = (file: string) => {
      try {
        return readFileSync(file, "utf8").split("\n");
      } catch {
        return []; // Not written yet.
      }
    };
    return {
      unexpectedExits: [...this.unexpected],
      log: read(this.logFile).slice(-lines).join("\n"),
      output: read(this.outputFile).slice(0, lines).join("\n"),
    };
  }

  /** Stops the server and removes its store. */
  async stop(): Promise<void> {
    await this.down();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * Records, on connection `nc`, every JetStream API request of a kind that ends nats-server 2.9 (a
 * nil-store panic) when it reaches a stream while the stream is being made, which is when a lost
 * bucket or stream is made again (issue #8): `STREAM.MSG.GET` (a KV bound without `allow_direct`
 * reads with it) and `STREAM.INFO` with a subjects filter. Baton reads streams with direct gets
 * only; a test asserts the returned list stays empty, which does not depend on hitting the window.
 */
export function recordUnsafeRequests(nc: NatsConnection): string[] {
  const unsafe: string[] = [];
  const request = nc.request.bind(nc);
  nc.request = (subject, payload, options) => {
    const body =
      typeof payload === "string" ? payload : new TextDecoder().decode(payload ?? new Uint8Array());
    if (/\.STREAM\.MSG\.GET\./.test(subject)) unsafe.push(subject);
    else if (/\.STREAM\.INFO\./.test(subject) && body.includes("subjects_filter"))
      unsafe.push(`${subject} with subjects_filter`);
    return request(subject, payload, options);
  };
  return unsafe;
}
