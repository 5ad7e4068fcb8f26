// Waiting on child processes, ports and conditions in tests: one copy of each, bounded in time.
import type { ChildProcess } from "node:child_process";
import { connect as tcpConnect } from "node:net";

/** Whether something accepts TCP connections on 127.0.0.1:`port` now. */
export function answers(port: number): Promise<boolean> {
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
 * Resolves once `child` (the server `name`) accepts connections on `port`; rejects when it exits
 * first or after `timeoutMs` (default 30 s).
 */
export async function untilListening(child: ChildProcess, port: number, name: string, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await answers(port))) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}`);
    if (Date.now() > deadline) throw new Error(`${name} did not listen on ${port} in ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Stops `child`: SIGTERM, then SIGKILL after `graceMs` (default 10 s); resolves once it has exited. */
export function stopProcess(child: ChildProcess, graceMs = 10_000): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

/**
 * Resolves when `child` exits, with `SIGKILL` when it (or the node process tsx runs for it, which
 * tsx reports as exit code 128 + 9) was killed that way, else its signal or exit code; rejects after
 * `timeoutMs`.
 */
export function exited(child: ChildProcess, timeoutMs: number): Promise<NodeJS.Signals | number | null> {
  const how = (code: number | null, signal: NodeJS.Signals | null) =>
    signal ?? (code === 128 + 9 ? "SIGKILL" : code);
  return new Promise((resolve, reject) => {
    if (child.exitCode !== null || child.signalCode !== null)
      return resolve(how(child.exitCode, child.signalCode));
    const timer = setTimeout(() => reject(new Error(`still running after ${timeoutMs} ms`)), timeoutMs);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      resolve(how(code, signal));
    });
  });
}

/** Resolves once `check()` holds, polling every `stepMs`; rejects after `timeoutMs` saying `what` never happened. */
export async function until(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 30_000,
  stepMs = 50,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}
