// The check-ins an approver may see: only requests this deployment signed, only in the approver's
// tenants. Everything else — another tenant's, a forged row, an unknown id — reads the same: absent.

import type { CheckInRecord, CheckInRequest } from '@toolgate/core';
import { mayDecide, type Approver } from './approvers';
import type { InboxContext } from './options';

/** Check-in ids as the core mints them; anything else is answered as unknown without a store read. */
const ID = /^[A-Za-z0-9_-]{1,128}$/;

const LIST_LIMIT = 200;
/** Pending check-ins per page of the list. */
export const PAGE_SIZE = 50;
/** Longest filter value read from a query; longer ones match nothing anyway. */
const MAX_FILTER_CHARS = 256;

/** Which pending check-ins the list shows: filters by tenant, tool and principal, and a page. */
export interface ListQuery {
  readonly tenant?: string;
  readonly tool?: string;
  readonly principal?: string;
  /** 1-based. */
  readonly page: number;
}

/** A list query from a URL's parameters; anything malformed is dropped, a bad page is the first. */
export function listQuery(read: (name: string) => string | undefined): ListQuery {
  const text = (name: string) => {
    const value = read(name)?.trim();
    return value === undefined || value === '' || value.length > MAX_FILTER_CHARS ? undefined : value;
  };
  const [tenant, tool, principal] = [text('tenant'), text('tool'), text('principal')];
  const page = Number(read('page'));
  return {
    ...(tenant !== undefined ? { tenant } : {}),
    ...(tool !== undefined ? { tool } : {}),
    ...(principal !== undefined ? { principal } : {}),
    page: Number.isInteger(page) && page >= 1 ? page : 1,
  };
}

/** One page of the pending check-ins, and who asked for how many of all of them (so a flood shows as one line). */
export interface PendingPage {
  readonly records: readonly CheckInRecord[];
  readonly page: number;
  readonly pages: number;
  readonly total: number;
  /** Every principal with pending check-ins under the filters but `principal`, and how many; most first. */
  readonly byPrincipal: ReadonlyArray<{
    readonly tenant: string | undefined;
    readonly principal: string | undefined;
    readonly count: number;
  }>;
}

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
  limit: number | 'all' = LIST_LIMIT,
  narrow: { readonly tenant?: string; readonly toolName?: string; readonly principal?: string } = {},
): Promise<CheckInRecord[]> {
  const filter = {
    decided,
    order: 'newest' as const,
    ...(limit !== 'all' ? { limit } : {}),
    ...(decided ? {} : { state: 'pending' as const }),
    ...(narrow.toolName !== undefined ? { toolName: narrow.toolName } : {}),
    ...(narrow.principal !== undefined ? { principal: narrow.principal } : {}),
  };
  const tenants =
    narrow.tenant === undefined
      ? approver.tenants
      : approver.tenants === 'all' || approver.tenants.includes(narrow.tenant)
        ? [narrow.tenant]
        : [];
  const batches =
    tenants === 'all'
      ? [await inbox.checkIns.list(filter)]
      : await Promise.all(tenants.map((tenant) => inbox.checkIns.list({ ...filter, tenant })));
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
    .slice(0, limit === 'all' ? undefined : limit);
}

/**
 * A page of the pending, undecided check-ins the approver may decide, newest first: every one is
 * on some page (none is cut), and `byPrincipal` counts them all, so one caller's flood cannot hide
 * another's check-in. Reads every match from the store; `checkIns.maxPending` bounds how many.
 */
export async function pendingPage(
  inbox: InboxContext,
  approver: Approver,
  query: ListQuery,
): Promise<PendingPage> {
  const everyone = await visibleRecords(inbox, approver, false, 'all', {
    ...(query.tenant !== undefined ? { tenant: query.tenant } : {}),
    ...(query.tool !== undefined ? { toolName: query.tool } : {}),
  });
  const counts = new Map<
    string,
    { tenant: string | undefined; principal: string | undefined; count: number }
  >();
  for (const { request } of everyone) {
    const key = JSON.stringify([request.identity?.tenant ?? null, request.identity?.principal ?? null]);
    const entry = counts.get(key);
    if (entry !== undefined) entry.count += 1;
    else
      counts.set(key, {
        tenant: request.identity?.tenant,
        principal: request.identity?.principal,
        count: 1,
      });
  }
  const matching =
    query.principal === undefined
      ? everyone
      : everyone.filter((record) => record.request.identity?.principal === query.principal);
  const pages = Math.max(1, Math.ceil(matching.length / PAGE_SIZE));
  const page = Math.min(query.page, pages);
  return {
    records: matching.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE),
    page,
    pages,
    total: matching.length,
    byPrincipal: [...counts.values()].sort(
      (a, b) => b.count - a.count || String(a.principal).localeCompare(String(b.principal)),
    ),
  };
}
