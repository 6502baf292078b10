// The list: pending check-ins the approver may decide, newest first, and the latest decisions. The
// `#live` block is what the page script swaps in when the event stream says something changed.

import type { CheckInRecord } from '@toolgate/core';
import { html } from 'hono/html';
import type { Html } from './html';
import { ago, left } from './time';
import { visible } from './values';

export interface ListView {
  readonly base: string;
  readonly now: number;
  readonly pending: readonly CheckInRecord[];
  readonly decided: readonly CheckInRecord[];
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
      ${
        view.pending.length === 0
          ? html`<p class="muted">Nothing is waiting for your approval.</p>`
          : html`<table>
              <thead>
                <tr>
                  <th>Tool</th>
                  <th>MCP source</th>
                  <th>Who asked</th>
                  <th>Asked</th>
                  <th>Time left</th>
                </tr>
              </thead>
              <tbody>
                ${view.pending.map((record) => pendingRow(view, record))}
              </tbody>
            </table>`
      }
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
    ${liveBlock(view)}`;
}
