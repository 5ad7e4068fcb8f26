export {
  type Algorithm,
  ASYMMETRIC_ALGORITHMS,
  type BearerError,
  type BearerOptions,
  type BearerVerifier,
  createBearerVerifier,
  DEFAULT_ALGORITHMS,
  DEV_ISSUER,
  type DevIssuer,
  type KeySource,
  loadOrCreateDevIssuer,
  mintDevToken,
  type TokenClaims,
  type Verified,
} from "./bearer.ts";
export {
  CLIENT_CLAIMS,
  type ClaimMapping,
  claimAt,
  clientOf,
  DEFAULT_CLAIM_MAPPING,
  type OrgSource,
  readIdentity,
  type VerifiedIdentity,
} from "./claims.ts";
export {
  AUTH_ENV,
  type AuthEnv,
  authEnvProblems,
  bearerOptionsFromEnv,
  claimMappingFromEnv,
} from "./env.ts";
export { base32, ClaimTokens, deriveKey, FileUrls, type KeyPurpose, randomId, runIdFor } from "./secrets.ts";
