/**
 * Instructions per transition of the gateway and the engine (issue #15: "counts, unlike times,
 * repeat on a busy machine"). `perf stat` has no hardware counters on this machine, so each of the
 * two services runs under `valgrind --tool=callgrind`, in the compiled build the image runs. One
 * client walks start_run → claim → submit; after a warm-up (so JIT compilation and first-use costs
 * are out), the counters of both services are zeroed (`callgrind_control --zero`), a fixed number of
 * runs is walked, and the counts are dumped (`callgrind_control --dump`) and divided by the
 * transitions made.
 *
 * Usage: `pnpm bench:instructions [--runs 50] [--warmup 20]`. Takes a few minutes: a service starts
 * about fifty times slower under valgrind.
 */
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { REPO, startDistributed } from "../test/support/deploy.ts";

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "50" },
    warmup: { type: "string", default: "20" },
  },
});
const RUNS = Number(values.runs);
const WARMUP = Number(values.warmup);
const SERVICES = ["gateway", "engine"] as const;

const build = mkdtempSync(join(tmpdir(), "baton-instr-build-"));
const out = mkdtempSync(join(tmpdir(), "baton-instr-"));
execFileSync(
  process.execPath,
  ["--import", "tsx", join(REPO, "scripts/build.ts"), "--out", build, "--install", "--offline"],
  { cwd: REPO, stdio: ["ignore", "ignore", "inherit"] },
);
const valgrind = (service: string) => [
  "valgrind",
  "--tool=callgrind",
  // Node writes machine code at run time (the JIT): callgrind must notice code it rewrites.
  "--smc-check=all-non-file",
  `--callgrind-out-file=${join(out, `${service}.%p.out`)}`,
];

const deployment = await startDistributed({
  compiledCli: join(build, "services/cli/src/main.js"),
  wrap: Object.fromEntries(SERVICES.map((s) => [s, valgrind(s)])),
  readyMs: 600_000,
  env: {
    BATON_RATE_PRINCIPAL_WRITES: "0",
    BATON_RATE_PRINCIPAL_READS: "0",
    BATON_RATE_ORG_WRITES: "0",
    BATON_RATE_ORG_READS: "0",
  },
});
try {
  await deployment.publish(join(REPO, "bench/processes/bench-step"));
  const agent = await deployment.session({ kind: "agent", id: "a_instructions" });
  const walk = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const started = await agent.ok("start_run", {
        process: "bench-step",
        inputs: { n: i },
        requestId: randomUUID(),
      });
      const claim = await agent.ok("claim", {
        runId: started.run.id,
        stepId: "work",
        requestId: randomUUID(),
      });
      await agent.ok("submit", {
        token: claim.token,
        output: { n: i },
        summary: "counted",
        requestId: randomUUID(),
      });
    }
  };
  await walk(WARMUP);
  const pids = SERVICES.map((s) => deployment.running(s)[0]?.pid as number);
  for (const pid of pids) execFileSync("callgrind_control", ["--zero", String(pid)], { stdio: "ignore" });
  await walk(RUNS);
  for (const pid of pids) execFileSync("callgrind_control", ["--dump", String(pid)], { stdio: "ignore" });
  await agent.close();
  const transitions = RUNS * 3;
  const lines = SERVICES.map((service, i) => {
    // The dump taken above is the file with the highest part number of that process.
    const pid = pids[i] as number;
    const parts = readdirSync(out)
      .filter((f) => f.startsWith(`${service}.${pid}.out.`))
      .sort((a, b) => Number(a.split(".").pop()) - Number(b.split(".").pop()));
    const file = parts.at(-1);
    if (!file) throw new Error(`no callgrind dump of the ${service}`);
    const total = /^summary: (\d+)$/m.exec(readFileSync(join(out, file), "utf8"))?.[1];
    return `${service}: ${(Number(total) / transitions / 1e6).toFixed(2)} M instructions per transition`;
  });
  process.stdout.write(`${transitions} transitions after ${WARMUP * 3} of warm-up\n${lines.join("\n")}\n`);
} finally {
  await deployment.stop();
  rmSync(build, { recursive: true, force: true });
  rmSync(out, { recursive: true, force: true });
}
