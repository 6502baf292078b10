// Every export here is public API of @toolgate/ai-sdk: a toolgate dispatcher's tools as a Vercel AI SDK ToolSet.

export type { ApprovalStatus } from './governed-call';
export type { AppRules, ToolApprovalQuestion, ToolgateApprovalOptions } from './tool-approval';
export { toolgateApproval } from './tool-approval';
export type { AiSdkTool, AiSdkToolsOptions, IdentitySource, ToolContext, ToolgateToolContext } from './tools';
export { aiSdkTools, toolgateContext } from './tools';
