// Every export here is public API of @toolgate/middleware: one factory per gate, and the canonical chain.

// Gates
export type { PermissionGateOptions } from './permission';
export { permissionCheckerOf, permissionGate } from './permission';
export type { CapabilitiesGateOptions } from './capabilities';
export { capabilitiesGate } from './capabilities';
export type { ValidateArgsGateOptions } from './validate-args';
export { validateArgsGate } from './validate-args';
export type { WantsGateOptions } from './wants';
export { wantsGate } from './wants';
export type {
  BudgetLimit,
  LimitCall,
  LimitDimension,
  LimitRule,
  LimitsGateOptions,
  RateLimit,
} from './limits';
export { limitsGate } from './limits';
export type { CheckInGateOptions } from './check-in';
export { checkInGate } from './check-in';
export type { CredentialsGateOptions } from './credentials';
export { credentialsGate } from './credentials';
export type { ResultCeilingGateOptions } from './result-ceiling';
export { resultCeilingGate } from './result-ceiling';

// Guards
export type { EgressChecked, EgressGuardOptions, EgressResolver } from './egress-guard';
export { egressGuard } from './egress-guard';
export type { SecretGuardOptions } from './secret-guard';
export { SECRET_RULE_IDS, secretGuard } from './secret-guard';
export type { PathGuardOptions, PathRoots } from './path-guard';
export { pathGuard } from './path-guard';
export type { CommandGuardOptions } from './command-guard';
export { commandGuard } from './command-guard';
export type { CrossServerFlow, CrossServerGuardOptions } from './cross-server-guard';
export { crossServerGuard } from './cross-server-guard';
export type { ResultScreenOptions, ScreenMode } from './result-screen';
export { resultScreen, SCREEN_FINDING_IDS } from './result-screen';
export {
  DESCRIPTION_FINDING_IDS,
  descriptionFindings,
  instructionsProblem,
  descriptionProblem,
  screenDescriptions,
} from './description-screen';

// The canonical chain
export type { CanonicalChainOptions, CanonicalGuards } from './canonical-chain';
export { canonicalChain } from './canonical-chain';

// Schema validation
export type {
  AjvValidatorOptions,
  CompiledSchema,
  SchemaValidator,
  ValidationProblem,
  ValidationResult,
} from './validator';
export { ajvValidator } from './validator';
export type { EvalFreeValidatorOptions } from './eval-free-validator';
export { evalFreeValidator } from './eval-free-validator';

// Stores
export type { InMemoryArtifactsOptions } from './in-memory-artifacts';
export { inMemoryArtifacts } from './in-memory-artifacts';
export { inMemoryCheckIns } from '@toolgate/core';
export type { LimitAnswer, LimitCharge, LimitStore } from './limit-store';
export { limitChargeProblem, MAX_LIMIT_WINDOW_MS, MAX_UNITS_PER_MS } from './limit-store';
export type { InMemoryLimits } from './in-memory-limits';
export { inMemoryLimits } from './in-memory-limits';
