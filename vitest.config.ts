import { defineConfig } from "vitest/config";

/**
 * One vitest run over the whole tree, in three projects:
 * - `unit`: `*.test.ts` next to the code, no I/O, run in parallel.
 * - `integration`: `test/**` suites that talk to real PostgreSQL, NATS, Redis and Baton over MCP.
 *   Two files run at a time, after the unit files (`groupOrder` 1). Each deployment has its own
 *   database, NATS namespace, ports (chosen free) and folders, the compiled build is made once per
 *   run under a lock (`test/support/deploy.ts`), and a file that measures something reads its own
 *   database's counters only; so two files never see each other. One file at a time left a third of
 *   the two cores idle (files waiting on timers, restarts and browsers): 850 s against 539 s for the
 *   same 1,449 tests on this machine. Ports a test chooses come from its worker's own block
 *   (`freePort`).
 * - `integration-alone`: the integration files whose tests hold a window of a second or less on a
 *   wall clock (a drain delay of 1.5 s, a scheduler pass of 300 ms, a reply margin of 1 s), run one
 *   at a time after the rest, so the other worker's load never decides them.
 * Time limits are generous on purpose: CI is one run on a 2-core machine that may be busy, and a test
 * that fails because the machine was slow is a defect. Tests keep their own, shorter deadlines where
 * a wait can end, so a real hang still fails with a message that says what never happened.
 */
/**
 * Every typed bus `call` checks its payload and the reply against the catalog's contract (issue #9),
 * in the test processes and in every service process a test starts (they inherit the environment).
 * Services run without it, so the hot path parses each message once.
 */
/**
 * `BATON_OPS_PORT=0`: every service a test starts picks a free port for its operations server
 * (issue #13), so services on this one host never fight over the default 9464; a test that reads
 * `/readyz` or `/metrics` gives its services ports it chose (`test/support/deploy.ts`).
 */
const env = { BATON_BUS_CHECK_CALLS: "1", BATON_OPS_PORT: "0" };

/** Integration files with sub-second wall-clock windows (`integration-alone` above). */
const ALONE = [
  "test/integration/operations.test.ts",
  "test/integration/scheduler-delivery.test.ts",
  "test/integration/scheduler-clock.test.ts",
];

export default defineConfig({
  test: {
    reporters: ["default", "./test/support/summary-reporter.ts"],
    globalSetup: ["./test/support/global-setup.ts"],
    projects: [
      {
        test: {
          name: "unit",
          env,
          include: ["libs/*/src/**/*.test.ts", "services/*/src/**/*.test.ts", "test/unit/**/*.test.ts"],
          testTimeout: 30_000,
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          name: "integration",
          env,
          include: [
            "test/e2e/**/*.test.ts",
            "test/conformance/**/*.test.ts",
            "test/integration/**/*.test.ts",
            "libs/*/test/**/*.test.ts",
            "services/*/test/**/*.test.ts",
          ],
          exclude: ALONE,
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
          testTimeout: 180_000,
          hookTimeout: 240_000,
        },
      },
      {
        test: {
          name: "integration-alone",
          env,
          include: ALONE,
          fileParallelism: false,
          testTimeout: 180_000,
          hookTimeout: 240_000,
        },
      },
    ],
  },
});
