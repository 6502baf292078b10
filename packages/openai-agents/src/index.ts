// Every export here is public API of @toolgate/openai-agents.

export type { GovernedToolsOptions, PausedCall } from './governed-tools';
export { governedTools } from './governed-tools';
