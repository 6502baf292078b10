export type { InboxApp } from './app';
export { inboxApp } from './app';
export type { CheckInScreen, InboxOptions, InboxWebhook } from './options';
export type { Approver, Approvers, StaticApprover } from './approvers';
export { staticApprovers } from './approvers';
export type { PinDiff } from './views/diff';
export type { OutcomeSummary } from './decide';
export type { SlackMessage } from './webhook';
