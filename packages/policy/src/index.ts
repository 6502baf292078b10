// Every export here is public API of @toolgate/policy.

export type { PolicyGate, PolicyGateOptions, VisibleToolsOptions } from './policy-gate';
export { policyGate } from './policy-gate';
export type { PolicyEffect, PolicyMode, PolicyRule } from './rules';
export { PolicyConfigError } from './rules';
export { matchesToolGlob, toolGlob } from './glob';
export { PolicyBuildError } from './decide';
export type { LoadPolicyOptions } from './load';
export { loadPolicy, PolicyLoadError } from './load';
export type {
  PolicyTestCase,
  PolicyTestReport,
  PolicyTestResult,
  PolicyTestTool,
  RunPolicyTestsOptions,
} from './test-runner';
export { runPolicyTests } from './test-runner';
