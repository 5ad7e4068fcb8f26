/**
 * `pnpm fuzz [--calls N] [--seed S]`: the hostile-input campaign of issue #12 against a fresh
 * `baton dev` in this process (test/support/hostile.ts), N generated calls (default 100,000), each
 * followed by a `describe`. Prints progress, then the outcome counts and every failure; exits 1 when
 * a check failed. Not part of CI, which runs a few thousand calls in test/e2e/hostile-input.test.ts.
 * The README gives the last long campaign's result.
 */
import { runCampaign } from "../test/support/hostile.ts";

function option(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const value = Number(process.argv[i + 1]);
  if (!Number.isSafeInteger(value) || value < 0) {
    process.stderr.write(`--${name} takes a whole number\n`);
    process.exit(2);
  }
  return value;
}

const calls = option("calls", 100_000);
const seed = option("seed", Date.now() % 2 ** 31);
process.stdout.write(`hostile-input campaign: ${calls} calls, seed ${seed}\n`);
const result = await runCampaign({
  calls,
  seed,
  maxFailures: 50,
  progress: (line) => process.stdout.write(`  ${line}\n`),
});
const outcomes = Object.entries(result.outcomes)
  .sort((a, b) => b[1] - a[1])
  .map(([k, v]) => `${k}: ${v}`)
  .join(", ");
process.stdout.write(
  `${result.calls} calls in ${Math.round(result.durationMs / 1000)} s (seed ${result.seed}); ${result.failures.length} failures\noutcomes: ${outcomes}\n`,
);
for (const failure of result.failures) process.stdout.write(`\n${failure}\n`);
process.exit(result.failures.length > 0 ? 1 : 0);
