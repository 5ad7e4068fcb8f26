import type { Reporter, TestModule } from "vitest/node";

/**
 * Prints one plain closing line, `N passed, N failed, N skipped`, that CI reads whatever the runner
 * (the workplace's "plain closing line that counts in any language").
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const m of modules) {
      for (const t of m.children.allTests()) {
        const state = t.result().state;
        if (state === "passed") passed++;
        else if (state === "failed") failed++;
        else skipped++;
      }
      if (m.state() === "failed" && [...m.children.allTests()].length === 0) failed++;
    }
    process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
