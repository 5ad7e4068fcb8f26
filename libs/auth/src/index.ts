export {
  type BearerError,
  type BearerVerifier,
  createBearerVerifier,
  DEV_ISSUER,
  type DevIssuer,
  type KeySource,
  loadOrCreateDevIssuer,
  mintDevToken,
  type TokenClaims,
} from "./bearer.ts";
export { base32, ClaimTokens, deriveKey, FileUrls, type KeyPurpose, randomId, runIdFor } from "./secrets.ts";
