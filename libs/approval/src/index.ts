export { AutoApprove } from "./auto.ts";
export {
  ApprovalError,
  type ApprovalResult,
  BatonApprovals,
  type BatonApprovalsOptions,
  cancelRequestId,
  decisionOf,
  TIMEOUT_REASON,
} from "./client.ts";
export {
  APPROVAL_INPUTS,
  APPROVAL_ROLE,
  APPROVAL_STEP,
  approvalProcessName,
  approvalProcessSource,
  DECISIONS,
  type Decision,
  MAX_TIER_LENGTH,
  TIER_PATTERN,
  tierProblem,
} from "./process.ts";
export {
  type ApprovalHandler,
  type ApprovalRequest,
  approvalInputs,
  argumentsDigest,
  PREVIEW_LIMITS,
  type RequestOptions,
  redactedPreview,
} from "./request.ts";
export { type Headers, type RunEnded, RunEndedReceiver } from "./webhooks.ts";
