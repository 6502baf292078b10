// The check-ins an approver may see: only requests this deployment signed, only in the approver's
// tenants. Everything else — another tenant's, a forged row, an unknown id — reads the same: absent.

import type { CheckInRecord, CheckInRequest } from '@toolgate/core';
import { mayDecide, type Approver } from './approvers';
import type { InboxContext } from './options';

/** Check-in ids as the core mints them; anything else is answered as unknown without a store read. */
const ID = /^[A-Za-z0-9_-]{1,128}$/;

const LIST_LIMIT = 200;

async function signed(inbox: InboxContext, request: CheckInRequest): Promise<boolean> {
  try {
    const { signature, ...unsigned } = request;
    return await inbox.keys.requests.verify(unsigned, signature);
  } catch {
    return false;
  }
}

export function expired(inbox: InboxContext, record: CheckInRecord): boolean {
  return Date.parse(record.request.expiresAt) <= inbox.now();
}

/** Whether the record still waits for a decision someone may give now. */
export function decidable(inbox: InboxContext, record: CheckInRecord): boolean {
  return record.state === 'pending' && record.decision === undefined && !expired(inbox, record);
}

/** The record when `approver` may see it; undefined otherwise, whatever the reason. */
export async function visibleRecord(
  inbox: InboxContext,
  approver: Approver,
  id: string,
): Promise<CheckInRecord | undefined> {
  if (!ID.test(id)) return undefined;
  const record = await inbox.checkIns.get(id);
  if (record === undefined || !mayDecide(approver, record.request)) return undefined;
  return (await signed(inbox, record.request)) ? record : undefined;
}

/** The approver's check-ins, newest first: undecided pending ones, or decided ones. */
export async function visibleRecords(
  inbox: InboxContext,
  approver: Approver,
  decided: boolean,
  limit = LIST_LIMIT,
): Promise<CheckInRecord[]> {
  const filter = {
    decided,
    order: 'newest' as const,
    limit,
    ...(decided ? {} : { state: 'pending' as const }),
  };
  const batches =
    approver.tenants === 'all'
      ? [await inbox.checkIns.list(filter)]
      : await Promise.all(approver.tenants.map((tenant) => inbox.checkIns.list({ ...filter, tenant })));
  const records = batches.flat().filter((record) => mayDecide(approver, record.request));
  const checked = await Promise.all(
    records.map(async (record) => ((await signed(inbox, record.request)) ? record : undefined)),
  );
  return checked
    .filter((record): record is CheckInRecord => record !== undefined)
    .sort(
      (a, b) =>
        Date.parse(b.request.createdAt) - Date.parse(a.request.createdAt) ||
        (a.request.id < b.request.id ? 1 : -1),
    )
    .slice(0, limit);
}
