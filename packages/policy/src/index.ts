// Every export here is public API of @toolgate/policy.

export type { PolicyGate, PolicyGateOptions, VisibleToolsOptions } from './policy-gate';
export { policyGate } from './policy-gate';
export type { PolicyEffect, PolicyMode, PolicyRule } from './rules';
export { PolicyConfigError } from './rules';
export { PolicyBuildError } from './decide';
