// The runs and published versions this replica keeps in memory (ARCHITECTURE rule 5: hot runs).
import type { PublishedProcess, Run } from "@baton/engine";
import { partitionOf } from "@baton/protocol";
import type { EngineStore } from "./store.ts";

/**
 * Hot runs (least recently used first out, at most `size`) and the published versions they pin.
 * A cached run is the last state this replica committed or read; a write that could not tell whether
 * its commit applied drops it ({@link forget}), and the rev fence catches anything older.
 * Published versions never change, so they are kept for good.
 */
export class RunCache {
  private readonly runs = new Map<string, Run>();
  private readonly versions = new Map<string, PublishedProcess>();
  /** The latest version of each process a `start_run` without a version used, by `org\nname`. */
  private readonly latest = new Map<string, PublishedProcess>();

  constructor(
    private readonly store: EngineStore,
    private readonly size = 10_000,
  ) {}

  /** The run with `id`, from memory or PostgreSQL (then kept), or null. */
  async load(id: string): Promise<Run | null> {
    const hot = this.runs.get(id);
    if (hot) return hot;
    const run = await this.store.loadRun(id);
    if (run) this.remember(run);
    return run;
  }

  /** The run with `id` when it is in memory (a read that may fall back to PostgreSQL itself). */
  peek(id: string): Run | undefined {
    return this.runs.get(id);
  }

  /**
   * Keeps `run` as its latest state, most recently used; a run that ended or was cancelled is dropped
   * instead. Nothing changes a finished run again (§3.5: every write but a replay is `conflict`
   * `run_ended`), so holding it only kept it alive on the heap: a busy engine finishing hundreds of
   * runs a second filled its cache with them, and the garbage collector's marking threads then ran
   * a sixth as long as the engine's own thread (issue #15, perf over a 90 s bench). A read of a
   * finished run comes from PostgreSQL; a `start_run` replayed after its run finished is recognised
   * inside the commit.
   */
  remember(run: Run): void {
    this.runs.delete(run.id);
    if (run.state === "ended" || run.state === "cancelled") return;
    this.runs.set(run.id, run);
    if (this.runs.size > this.size) {
      const oldest = this.runs.keys().next().value;
      if (oldest !== undefined) this.runs.delete(oldest);
    }
  }

  /** Drops the run with `id`: the next write reads it from PostgreSQL. */
  forget(id: string): void {
    this.runs.delete(id);
  }

  /** Drops every run of `partition` (of `partitions`): this replica no longer owns it. */
  forgetPartition(partition: number, partitions: number): void {
    for (const id of [...this.runs.keys()])
      if (partitionOf(id, partitions) === partition) this.runs.delete(id);
  }

  /**
   * The published version `version` of `name` in `org`, or its latest when `version` is undefined;
   * null when there is none. A latest version comes from memory once read: a commit made on it is
   * checked against the registry in the same statement (`Transition.latest`), and a
   * `StaleVersion` there makes the caller {@link forgetLatest} and ask again.
   */
  async published(org: string, name: string, version?: number): Promise<PublishedProcess | null> {
    if (version !== undefined) {
      const hit = this.versions.get(`${org}\n${name}\n${version}`);
      if (hit) return hit;
      const loaded = await this.store.loadVersion(org, name, version);
      if (loaded) this.versions.set(`${org}\n${name}\n${version}`, loaded);
      return loaded;
    }
    const key = `${org}\n${name}`;
    const hit = this.latest.get(key);
    if (hit) return hit;
    const loaded = await this.store.loadVersion(org, name);
    if (loaded) {
      this.latest.set(key, loaded);
      this.versions.set(`${org}\n${name}\n${loaded.version}`, loaded);
    }
    return loaded;
  }

  /** Drops the latest version of `name` kept for `org`: a later one was published. */
  forgetLatest(org: string, name: string): void {
    this.latest.delete(`${org}\n${name}`);
  }

  /** The published version a run pins. Throws when the registry does not have it. */
  async version(org: string, name: string, version: number): Promise<PublishedProcess> {
    const key = `${org}\n${name}\n${version}`;
    let def = this.versions.get(key);
    if (!def) {
      const loaded = await this.store.loadVersion(org, name, version);
      if (!loaded) throw new Error(`run pins ${name} v${version}, which is not in the registry`);
      def = loaded;
      this.versions.set(key, def);
    }
    return def;
  }
}
