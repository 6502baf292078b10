// Every export here is public API of @toolgate/testing. Side-effect free and framework-free, so a
// demo can import it; jest matchers and conformance suites live in @toolgate/testing/jest.

// Doubles
export type { MockTool, MockToolCall, MockToolOptions } from './mock-tool';
export { mockTool } from './mock-tool';
export type {
  PermissionRule,
  SeenPermissionRequest,
  StaticPermissions,
  StaticPermissionsOptions,
} from './static-permissions';
export { staticPermissions } from './static-permissions';
export type { SeenCredentialRequest, StaticCredential, StaticCredentials } from './static-credentials';
export { staticCredentials } from './static-credentials';
export { inMemoryCheckIns } from '@toolgate/core';
export { inMemoryArtifacts } from '@toolgate/middleware';

// Determinism
export type { FixedClock } from './clock';
export { FIXED_CLOCK_START, fixedClock } from './clock';
export type { SeededIdsOptions } from './ids';
export { seededIds } from './ids';

// The scripted model and the agent loop
export type {
  AgentLoopOptions,
  AgentLoopResult,
  AgentLoopStop,
  AgentModel,
  ModelSay,
  ModelToolCall,
  ModelTurn,
  TranscriptEntry,
} from './agent-loop';
export { runAgentLoop } from './agent-loop';
export type { ScriptedModel, ScriptFunction, ScriptStep } from './scripted-model';
export { lastToolMessage, scriptedModel } from './scripted-model';

// Racing processes in a store's own tests
export type { GrantRaceCounts } from './grant-race';
export { RACED_NONCES, RACED_USES, raceForGrant } from './grant-race';

// Reading outcomes
export { formatOutcome, formatTranscript, isDispatchOutcome } from './format';
export type { LedgerRowExpectation, MatcherResult, MatcherThis, ToolgateMatchers } from './matchers';
export { toolgateMatchers } from './matchers';
