import { spawn } from "node:child_process";
import { join } from "node:path";
import { REPO } from "./deploy.ts";

/** What one `baton conformance` child process did. */
export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `baton conformance <args>` as a child process, as a user runs it from a clone (`node --import
 * tsx services/cli/src/main.ts`), without this vitest run's worker settings in its environment.
 */
export function runConformanceCli(args: string[], timeoutMs = 600_000): Promise<CliRun> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("VITEST")));
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", join(REPO, "services/cli/src/main.ts"), "conformance", ...args],
      { cwd: REPO, env, stdio: ["ignore", "pipe", "pipe"] },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(
        new Error(`baton conformance ${args.join(" ")} ran past ${timeoutMs} ms:\n${stdout}\n${stderr}`),
      );
    }, timeoutMs);
    child.once("error", reject);
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
