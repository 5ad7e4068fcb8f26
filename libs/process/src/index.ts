/**
 * `@baton/process`: the PROCESS.md reference library — parse, validate, content hash, value
 * checking and durations (specification §2, §6 rule 5; profiles parallel-1 and check-1).
 */

export {
  type CheckDef,
  type CheckQuestionDef,
  type ChoiceCheck,
  checkOf,
  type RubricCheck,
  type YesNoCheck,
} from "./check.ts";
export { type Decoded, decodeProcessFile } from "./decode.ts";
export { durationProblem, MAX_DURATION_MS, parseDuration } from "./duration.ts";
export { formatIssue } from "./format.ts";
export { contentHash } from "./hash.ts";
export { type ParseOptions, parseProcess } from "./parse.ts";
export {
  FIELD_NAME_PATTERN,
  isFieldName,
  isProcessName,
  isStepId,
  NAME_PATTERN,
  ROLE_PATTERN,
  STEP_ID_PATTERN,
} from "./patterns.ts";
export { type BranchMembership, branchMembership, stepById, stepNext } from "./steps.ts";
export {
  loneSurrogateAt,
  showUnstorable,
  textProblem,
  unstorableAt,
  unstorableCharacters,
} from "./text.ts";
export {
  type AgentStep,
  type ApproveStep,
  EVIDENCE_KINDS,
  type EvidenceKind,
  FIELD_TYPES,
  type FieldDecl,
  type FieldObject,
  type Fields,
  type FieldType,
  type FinishStep,
  type Issue,
  type Next,
  type OneOfValue,
  type ParallelStep,
  type ParseResult,
  type Process,
  type Requires,
  type Route,
  STEP_KINDS,
  type Step,
  type StepKind,
  type TaskStep,
  type WaitForStep,
  type WaitStep,
  type WaitUntilStep,
} from "./types.ts";
export {
  checkValue,
  checkValues,
  isDate,
  isDateTime,
  iso,
  isPersonValue,
  normalizeField,
  parseDateTime,
} from "./values.ts";
export { numberProblem } from "./yaml-tree.ts";
