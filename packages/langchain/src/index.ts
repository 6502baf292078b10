// Every export here is public API of @toolgate/langchain.

export type { CheckInInterrupt, GovernedOptions, PausedCall } from './governed-call';
export { checkInInterrupt } from './governed-call';
export { governedTools } from './governed-tools';
export type { NamedDecision } from './resume-answer';
export { toolgateMiddleware } from './middleware';
export type { TurnInterrupt } from './turn-review';
export { turnInterrupt } from './turn-review';
