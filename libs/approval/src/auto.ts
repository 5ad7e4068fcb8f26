import type { Decision } from "./process.ts";
import type { ApprovalHandler, ApprovalRequest, RequestOptions } from "./request.ts";

/**
 * An approval handler for tests of a runtime: answers every request at once with one decision
 * (default `approved`) and keeps the requests it saw, in order, in {@link requests}. No Baton, no I/O.
 */
export class AutoApprove implements ApprovalHandler {
  /** Every request answered, oldest first. */
  readonly requests: ApprovalRequest[] = [];

  constructor(private readonly decision: Decision = "approved") {}

  async request(req: ApprovalRequest, _options?: RequestOptions): Promise<Decision> {
    this.requests.push(req);
    return this.decision;
  }
}
