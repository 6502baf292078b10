// Every export here is public API of @toolgate/core.

// The Tool contract
export type {
  ArgsOf,
  JsonSchema,
  ResultCeiling,
  Tool,
  ToolAnnotations,
  ToolArgs,
  ToolDefinition,
  ToolSchema,
} from './tool';
export { assertTool, CAPABILITIES, defineTool, TOOL_NAME_PATTERN, ToolDefinitionError } from './tool';

// Context and verbs
export type { AskOptions, CheckInRequirement, ToolMiddlewareContext, ToolState } from './middleware-context';
export type { RefusalDetail } from './refusal';
export { formatCount, Pause, Refusal, refusalReason, sentence } from './refusal';

// Chains
export type {
  CreateChainOptions,
  Middleware,
  MiddlewareDescription,
  Next,
  OrderViolation,
  PauseServiceOptions,
  UnsafeOrder,
} from './chain';
export type { PassThrough } from './plan';
export {
  CANONICAL_ORDER,
  Chain,
  ChainConfigError,
  ChainOrderError,
  createChain,
  DEFAULT_CHECK_IN_TTL_MS,
  isChain,
  listableTools,
  mayRequireCheckIn,
  POLICY_ANCHOR,
} from './chain';

// Dispatch and outcomes
export type {
  ChainSource,
  DispatchOptions,
  Dispatcher,
  DispatcherOptions,
  ResumeOptions,
  ToolCall,
  ToolgateEmitter,
  TraceContext,
} from './dispatcher';
export { createDispatcher, DispatcherConfigError } from './dispatcher';
export type {
  DispatchOutcome,
  FailedOutcome,
  LedgerOutcome,
  LedgerRow,
  OutcomeKind,
  PausedOutcome,
  RefusedOutcome,
  ResultOutcome,
} from './outcomes';

// Events
export type { EventBase, GateEvent, ToolgateEventMap, ToolgateEventType, ToolgateListeners } from './events';
export { EVENT_TYPES } from './events';

// Check-in
export type {
  CheckInApproval,
  CheckInComponent,
  CheckInDecision,
  CheckInFilter,
  CheckInReceipt,
  CheckInRecord,
  CheckInRefusal,
  CheckInRequest,
  CheckInState,
  CheckInStore,
  InMemoryCheckInsOptions,
  RecordedDecision,
} from './check-in';
export {
  checkInApproved,
  checkInDeclined,
  checkInFilter,
  inMemoryCheckIns,
  recordedDecision,
} from './check-in';
export type { AwaitDecisionOptions, CarryOutOptions } from './decisions';
export { awaitDecision, carryOutDecision, decisionOf } from './decisions';
export type { GrantBound, StandingGrant, StandingGrantFilter, StandingGrantStore } from './standing-grants';
export type { SpentStateStore } from './spent-states';
export { inMemorySpentStates, SpentNonces } from './spent-states';
export type {
  StaleTaskEnding,
  StoredTaskRow,
  TaskOwnerKey,
  TaskRecord,
  TaskRecordChange,
  TaskRecordError,
  TaskRecordStatus,
  TaskRecordStore,
} from './task-records';
export {
  changedStoredTask,
  changedTaskRecord,
  inMemoryTaskRecords,
  STALE_TASK_DROPPED_FIELDS,
  staleTask,
  storedTaskRow,
  taskRecordOfStored,
  TERMINAL_TASK_STATUSES,
} from './task-records';
export {
  grantActive,
  grantBounds,
  grantCovers,
  inMemoryStandingGrants,
  standingGrantFor,
  withinBounds,
} from './standing-grants';
export type { SharedCheckIn, ShareCheckInOptions } from './check-in-sharing';
export { DEFAULT_MAX_PENDING, sameCall, shareCheckIn } from './check-in-sharing';
export type { ApprovedCall, CheckInLookup, CheckInLookupOptions } from './check-in-lookup';
export { checkInLookup, checkInRaisedFor } from './check-in-lookup';
export { comparePins, inMemoryPins, pinMatches } from './pins';

// Ports a deployment plugs in
export type {
  ArtifactInput,
  ArtifactMeta,
  ArtifactStore,
  AuditHead,
  AuditJournal,
  AuditJournalEntry,
  AuditRecord,
  AuditSeal,
  AuditStore,
  CredentialNeed,
  CredentialProvider,
  CredentialRequestContext,
  Decision,
  PermissionChecker,
  PermissionRequest,
  PinFilter,
  PinKind,
  PinObservation,
  PinRecord,
  PinStore,
  ResolvedCredential,
  StoredArtifact,
} from './ports';
export type { ArtifactScope, Identity } from './identity';
export { scopeOf } from './identity';
export { Credential } from './credential';
export { redact, redactValue } from './redact';
export type { ContentBlock, ContentResult, ContentSize } from './content';
export { base64Bytes, contentSize, contentText, isContentResult } from './content';

// Helpers for gate and store authors
export type { Signer } from './canonical';
export { canonicalJson, createSigner, digestOf, shortHash } from './canonical';
export { artifactJson, artifactKind, scopeFields } from './artifact-input';
export { AUDIT_GENESIS, auditContinues, auditRowValues, keepAuditRecordText } from './audit-input';
export { AbortedError, DEFAULT_DEADLINE_MS, DeadlineError, withDeadline } from './deadline';
export { isArtifactRef, newArtifactRef, newId, randomBase62 } from './ids';
