// The support desk's own tools: a customer lookup, a refund that needs a person and a billing key,
// and a report over an exported dataset that is too large unless the model narrows it.

import { defineTool } from '@toolgate/core';
import { Type } from 'typebox';

const CUSTOMERS: Record<string, { name: string; plan: string; openTickets: number }> = {
  c_42: { name: 'Ada Park', plan: 'business', openTickets: 2 },
  c_77: { name: 'Lin Osei', plan: 'starter', openTickets: 0 },
};

export const lookupCustomer = defineTool({
  name: 'lookup_customer',
  description: 'Look up a customer by id.',
  inputSchema: Type.Object(
    { customerId: Type.String({ pattern: '^c_[0-9]+$' }) },
    { additionalProperties: false },
  ),
  capabilities: ['user_data'],
  execute: ({ customerId }) => CUSTOMERS[customerId] ?? { error: `no customer ${customerId}` },
});

/** Every refund that actually ran, so the demo (and its test) can count them. */
export const refundsIssued: { customerId: string; amount: number }[] = [];

export const issueRefund = defineTool({
  name: 'issue_refund',
  description: 'Refund an amount (in EUR) to a customer.',
  inputSchema: Type.Object(
    {
      customerId: Type.String(),
      amount: Type.Number({ exclusiveMinimum: 0 }),
      reason: Type.String({ default: 'goodwill' }),
    },
    { additionalProperties: false },
  ),
  capabilities: ['payments'],
  checkIn: (args) => args.amount > 100,
  checkInComponent: { id: 'refund-approval' },
  needs: { kind: 'api_key', service: 'billing' },
  execute: async ({ customerId, amount, reason }, ctx) => {
    // The key is used here, at the edge, and never returned.
    const key = ctx.credential?.reveal();
    if (typeof key !== 'string') throw new Error('billing key missing');
    refundsIssued.push({ customerId, amount });
    return { refundId: `rf_${refundsIssued.length}`, customerId, amount, reason, status: 'sent' };
  },
});

export const exportReport = defineTool({
  name: 'export_report',
  description: 'Summarise the rows of a dataset artifact. Pass the dataset by its art_… ref.',
  inputSchema: Type.Object(
    {
      rows: Type.String({ description: 'an art_… ref of kind dataset/rows' }),
      limit: Type.Integer({ minimum: 1, default: 1000 }),
    },
    { additionalProperties: false },
  ),
  wants: { rows: 'dataset/rows' },
  resultCeiling: { maxChars: 2000, narrowBy: ['limit'] },
  execute: ({ rows, limit }) => {
    const all = rows as unknown as { ticket: string; topic: string; minutes: number }[];
    return { total: all.length, rows: all.slice(0, limit) };
  },
});

/** 300 tickets: far more than the model should read at once. */
export function ticketRows(): { ticket: string; topic: string; minutes: number }[] {
  const topics = ['billing', 'login', 'shipping', 'refund', 'api'];
  return Array.from({ length: 300 }, (_, i) => ({
    ticket: `T-${1000 + i}`,
    topic: topics[i % topics.length]!,
    minutes: 5 + ((i * 37) % 90),
  }));
}
