// The list: pending check-ins the approver may decide, newest first, and the latest decisions. The
// `#live` block is what the page script swaps in when the event stream says something changed.

import type { CheckInRecord } from '@toolgate/core';
import { html } from 'hono/html';
import type { Html } from './html';
import { ago, left } from './time';
import type { ListQuery, PendingPage } from '../records';
import { argsSummary, visible } from './values';

export interface ListView {
  readonly base: string;
  readonly now: number;
  readonly pending: PendingPage;
  readonly query: ListQuery;
  readonly decided: readonly CheckInRecord[];
}

/** The list's URL for `query` changed by `change` (undefined drops a filter). */
function listHref(
  view: ListView,
  change: Partial<Record<keyof ListQuery, string | number | undefined>>,
): string {
  const merged: Record<string, string | number | undefined> = { ...view.query, ...change };
  const params = new URLSearchParams();
  for (const name of ['tenant', 'tool', 'principal', 'page'] as const) {
    const value = merged[name];
    if (value !== undefined && !(name === 'page' && value === 1)) params.set(name, String(value));
  }
  const search = params.toString();
  return `${view.base}/${search === '' ? '' : `?${search}`}`;
}

function filters(view: ListView): Html {
  const { query } = view;
  return html`<form class="filters" method="get" action="${view.base}/">
    <label>Tenant <input name="tenant" value="${query.tenant ?? ''}" /></label>
    <label>Tool <input name="tool" value="${query.tool ?? ''}" /></label>
    <label>Who asked <input name="principal" value="${query.principal ?? ''}" /></label>
    <button type="submit">Filter</button>
    ${
      query.tenant !== undefined || query.tool !== undefined || query.principal !== undefined
        ? html`<a href="${view.base}/">Clear</a>`
        : ''
    }
  </form>`;
}

/** Who asked for how many: a flood from one caller is one line here, and everyone else stays one click away. */
function byPrincipal(view: ListView): Html | string {
  const rows = view.pending.byPrincipal;
  if (rows.length < 2 && view.query.principal === undefined) return '';
  return html`<nav class="by-principal" aria-label="Waiting, by who asked">
    ${rows.map(
      (row) =>
        html`<a
          data-principal="${row.principal ?? ''}"
          href="${listHref(view, { principal: row.principal, tenant: row.tenant ?? view.query.tenant, page: 1 })}"
          >${row.principal === undefined ? 'unknown' : visible(row.principal)}${
            row.tenant === undefined ? '' : html` <span class="muted">· ${visible(row.tenant)}</span>`
          }
          (${row.count})</a
        >`,
    )}
  </nav>`;
}

function pager(view: ListView): Html | string {
  const { page, pages, total } = view.pending;
  if (pages <= 1) return '';
  return html`<nav class="pager" aria-label="Pages">
    ${page > 1 ? html`<a rel="prev" href="${listHref(view, { page: page - 1 })}">Newer</a>` : ''}
    <span>Page ${page} of ${pages} (${total} waiting)</span>
    ${page < pages ? html`<a rel="next" href="${listHref(view, { page: page + 1 })}">Older</a>` : ''}
  </nav>`;
}

const href = (base: string, record: CheckInRecord) =>
  `${base}/check-ins/${encodeURIComponent(record.request.id)}`;

function who(record: CheckInRecord): Html {
  const identity = record.request.identity;
  const principal = identity?.principal;
  const tenant = identity?.tenant;
  return html`${principal === undefined ? html`<span class="muted">unknown</span>` : visible(principal)}${
    tenant === undefined ? '' : html` <span class="muted">· ${visible(tenant)}</span>`
  }`;
}

const source = (record: CheckInRecord): Html | string =>
  record.request.toolSource === undefined
    ? html`<span class="muted">own tool</span>`
    : visible(record.request.toolSource);

function pendingRow(view: ListView, record: CheckInRecord): Html {
  const { request } = record;
  const expired = Date.parse(request.expiresAt) <= view.now;
  return html`<tr data-check-in="${request.id}" class="${expired ? 'expired' : ''}">
    <td><a href="${href(view.base, record)}">${visible(request.toolName)}</a></td>
    <td class="args-summary" dir="ltr">${visible(argsSummary(request.review))}</td>
    <td>${source(record)}</td>
    <td>${who(record)}</td>
    <td>
      <time datetime="${request.createdAt}" data-since="${request.createdAt}"
        >${ago(view.now, request.createdAt)}</time
      >
    </td>
    <td>
      <time datetime="${request.expiresAt}" data-expires="${request.expiresAt}"
        >${left(view.now, request.expiresAt)}</time
      >
    </td>
  </tr>`;
}

function decisionText(record: CheckInRecord): Html {
  const decision = record.decision!;
  const what = decision.approved
    ? decision.args !== undefined
      ? 'approved with changes'
      : 'approved'
    : 'declined';
  const state =
    record.state === 'consumed'
      ? 'carried out'
      : record.state === 'revoked'
        ? 'did not run'
        : 'waiting for its caller';
  return html`<span class="badge ${decision.approved ? 'approved' : 'declined'}">${what}</span> by
    ${visible(decision.by)} · ${state}`;
}

export function liveBlock(view: ListView): Html {
  return html`<div id="live">
    <section id="check-ins">
      ${byPrincipal(view)}
      ${
        view.pending.records.length === 0
          ? html`<p class="muted">Nothing is waiting for your approval.</p>`
          : html`<table>
              <thead>
                <tr>
                  <th>Tool</th>
                  <th>Arguments</th>
                  <th>MCP source</th>
                  <th>Who asked</th>
                  <th>Asked</th>
                  <th>Time left</th>
                </tr>
              </thead>
              <tbody>
                ${view.pending.records.map((record) => pendingRow(view, record))}
              </tbody>
            </table>`
      }
      ${pager(view)}
    </section>
    ${
      view.decided.length === 0
        ? ''
        : html`<section id="decided">
            <h2>Recently decided</h2>
            <table>
              <thead>
                <tr>
                  <th>Tool</th>
                  <th>Who asked</th>
                  <th>Decision</th>
                </tr>
              </thead>
              <tbody>
                ${view.decided.map(
                  (record) =>
                    html`<tr data-decided="${record.request.id}">
                      <td><a href="${href(view.base, record)}">${visible(record.request.toolName)}</a></td>
                      <td>${who(record)}</td>
                      <td>${decisionText(record)}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </section>`
    }
  </div>`;
}

export function listPage(view: ListView): Html {
  return html`<h1>Waiting for approval</h1>
    ${filters(view)} ${liveBlock(view)}`;
}
