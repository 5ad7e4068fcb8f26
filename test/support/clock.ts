import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Advanced, advanceClock, clockNow } from "../../services/cli/src/clock.ts";
import { type Deployment, startDistributed, startEmbedded } from "./deploy.ts";

/**
 * Time for the timer suites (issue #5): a deployment's manual clock read and moved over the admin API
 * exactly as `baton clock advance` does, and small processes written for one test.
 */

export { DAY, HOUR, iso, MINUTE, rfc3339 } from "@baton/conformance/time";

/**
 * The deployments the timer suites run against: `baton dev --clock manual`, and every service as its
 * own process over NATS and PostgreSQL sharing one manual clock (`BATON_CLOCK=manual`, NATS KV).
 */
export const MANUAL_CLOCK_DEPLOYMENTS = [
  ["embedded (baton dev --clock manual)", () => startEmbedded({ clock: "manual" })],
  ["distributed (baton serve, shared manual clock)", () => startDistributed({ clock: "manual" })],
] as const;

/** A deployment's manual clock, moved as an operator. */
export class TestClock {
  private constructor(
    private readonly baseUrl: string,
    private readonly token: string,
  ) {}

  /** The clock of `baton`, acting as an operator of `org`. */
  static async of(baton: Deployment, org = "default"): Promise<TestClock> {
    const token = await baton.token({
      kind: "person",
      id: "clock-operator@example.com",
      operator: true,
      org,
    });
    return new TestClock(baton.url.replace(/\/mcp$/, ""), token);
  }

  /** The server's time, epoch ms. */
  async now(): Promise<number> {
    return Date.parse((await clockNow(this.baseUrl, this.token)).now);
  }

  /**
   * Moves the clock forward by `ms` and returns the new time (epoch ms) once every timer that fell
   * due has been applied (`baton clock advance`).
   */
  async advance(ms: number): Promise<number> {
    return Date.parse((await this.advanceReport(ms)).now);
  }

  /**
   * {@link advance}, returning the whole outcome: `from` and `now` (RFC 3339) and `applied`, the
   * timers with a fire time in between that the journal shows applied.
   */
  advanceReport(ms: number, timeoutMs = 60_000): Promise<Advanced> {
    return advanceClock(this.baseUrl, this.token, ms, timeoutMs);
  }

  /** The admin API's base URL and this operator's token, for calls the CLI does not make. */
  get api(): { baseUrl: string; token: string } {
    return { baseUrl: this.baseUrl, token: this.token };
  }
}

/**
 * Writes a process written for a test to `<tmp>/<name>/PROCESS.md` and returns the folder, ready
 * for `baton.publish`. `frontmatter` is the YAML between the `---` lines, without `name`. The folder
 * lives in the run's temporary directory (`BATON_TEST_TMP`, removed when the run ends).
 */
export function processFolder(name: string, frontmatter: string, body = `# ${name}\n`): string {
  const parent = mkdtempSync(join(process.env.BATON_TEST_TMP ?? tmpdir(), "baton-proc-"));
  const dir = join(parent, name);
  mkdirSync(dir);
  writeFileSync(join(dir, "PROCESS.md"), `---\nname: ${name}\n${frontmatter.trim()}\n---\n\n${body}`);
  return dir;
}
