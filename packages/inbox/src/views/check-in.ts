// One check-in in full: who asked for what, every argument (folded when long, never cut), the
// evidence, the tool's own screen, a definition that changed since it was pinned, and the actions.

import { canonicalJson, type CheckInRecord } from '@toolgate/core';
import { html } from 'hono/html';
import type { OutcomeSummary } from '../decide';
import type { Html } from './html';
import { ago, left } from './time';
import { argumentTable, fullValue, jsonForEditing, visible } from './values';

export interface Notice {
  readonly tone: 'ok' | 'bad' | 'info';
  readonly text: string;
}

export interface CheckInView {
  readonly now: number;
  readonly record: CheckInRecord;
  /** Where the forms post: `…/approve` and `…/decline` are appended. Undefined: no actions. */
  readonly actions?: {
    readonly path: string;
    readonly csrf: string;
    readonly only?: 'approve' | 'decline';
    /** Offer a standing grant with the approval. */
    readonly grants?: boolean;
  };
  readonly screen?: Html | string;
  readonly pinDiff?: Html | string;
  readonly notice?: Notice;
}

export function status(now: number, record: CheckInRecord): { readonly text: string; readonly tone: string } {
  const { decision } = record;
  if (decision !== undefined) {
    const what = decision.approved
      ? decision.args !== undefined
        ? 'Approved with changes'
        : 'Approved'
      : 'Declined';
    return { text: `${what} by ${decision.by}`, tone: decision.approved ? 'approved' : 'declined' };
  }
  if (record.state === 'consumed') return { text: 'Answered', tone: 'approved' };
  if (record.state === 'revoked') return { text: 'Withdrawn', tone: 'declined' };
  if (Date.parse(record.request.expiresAt) <= now) return { text: 'Expired', tone: 'expired' };
  return { text: 'Waiting for a decision', tone: 'waiting' };
}

/** What the approver is told after deciding. */
export function noticeFor(outcome: OutcomeSummary | undefined, approved: boolean): Notice {
  if (outcome === undefined)
    return {
      tone: 'info',
      text: approved
        ? 'Your approval is recorded. The call runs when its caller picks it up.'
        : 'Your decision is recorded. The caller will read your reason.',
    };
  switch (outcome.kind) {
    case 'result':
      return { tone: 'ok', text: 'Approved. The call ran.' };
    case 'failed':
      return { tone: 'bad', text: 'Approved. The call ran, and the tool reported a failure.' };
    case 'paused':
      return {
        tone: 'info',
        text: 'Approved, but the call needs another approval before it can run; it is in the list.',
      };
    case 'refused':
      return outcome.code === 'CHECKIN_DECLINED'
        ? { tone: 'ok', text: 'Declined. The caller reads your reason.' }
        : {
            tone: 'bad',
            text: `Recorded, but the call did not run: ${outcome.gate} refused it. ${outcome.reason}`,
          };
    case 'error':
      return {
        tone: 'bad',
        text: 'Your decision is recorded, but carrying it out failed; the caller was not answered.',
      };
  }
}

function facts(view: CheckInView): Html {
  const { request } = view.record;
  const identity = request.identity;
  const row = (name: string, value: Html | string | undefined) =>
    value === undefined
      ? ''
      : html`<dt>${name}</dt>
          <dd>${value}</dd>`;
  const text = (value: string | undefined) => (value === undefined ? undefined : visible(value));
  return html`<dl class="facts">
    ${row('Tool', text(request.toolName))}
    ${row('MCP source', request.toolSource === undefined ? html`<span class="muted">own tool</span>` : visible(request.toolSource))}
    ${row('Who asked', text(identity?.principal))} ${row('Tenant', text(identity?.tenant))}
    ${row('Conversation', text(identity?.conversation))} ${row('Question', text(request.question))}
    ${row('Asked by gate', text(request.asker))}
    ${row('Asked', html`<time datetime="${request.createdAt}" data-since="${request.createdAt}">${ago(view.now, request.createdAt)}</time>`)}
    ${row('Expires', html`<time datetime="${request.expiresAt}" data-expires="${request.expiresAt}">${left(view.now, request.expiresAt)}</time>`)}
    ${row('Check-in', request.id)}
  </dl>`;
}

function decisionView(record: CheckInRecord): Html | string {
  const { decision, receipt } = record;
  if (decision === undefined) return '';
  return html`<h2>Decision</h2>
    <dl class="facts">
      <dt>By</dt>
      <dd>${visible(decision.by)}</dd>
      <dt>At</dt>
      <dd>${decision.decidedAt}</dd>
      ${
        decision.approved && decision.note !== undefined
          ? html`<dt>Note</dt>
              <dd>${fullValue(decision.note)}</dd>`
          : ''
      }
      ${
        !decision.approved
          ? html`<dt>Reason</dt>
              <dd>${fullValue(decision.reason)}</dd>`
          : ''
      }
      ${
        decision.approved && decision.args !== undefined
          ? html`<dt>Approved arguments</dt>
              <dd>${argumentTable(decision.args)}</dd>`
          : ''
      }
      ${
        receipt === undefined
          ? ''
          : html`<dt>Receipt</dt>
              <dd>run approved at ${receipt.approvedAt}</dd>`
      }
    </dl>`;
}

function actionsView(view: CheckInView): Html | string {
  const { actions } = view;
  if (actions === undefined) return '';
  const { review } = view.record.request;
  const csrf = html`<input type="hidden" name="_csrf" value="${actions.csrf}" />`;
  const approve = html`<form method="post" action="${actions.path}/approve" class="approve">
    <h3>Approve</h3>
    ${csrf}
    <label
      >Note for the audit trail (optional)<textarea name="note" rows="2" maxlength="2000"></textarea>
    </label>
    <button class="approve" type="submit">Approve</button>
  </form>`;
  const decline = html`<form method="post" action="${actions.path}/decline" class="decline">
    <h3>Decline</h3>
    ${csrf}
    <label>Reason the model will read<textarea name="reason" rows="2" maxlength="2000"></textarea></label>
    <button class="decline" type="submit">Decline</button>
  </form>`;
  const change = html`<form method="post" action="${actions.path}/approve" class="change">
    <h3>Approve with changes</h3>
    ${csrf}
    <label
      >Arguments to run instead (JSON). Policy judges the changed call again: you can narrow it, not widen it.
      <textarea class="args" name="args" spellcheck="false" dir="ltr">
${jsonForEditing(JSON.parse(canonicalJson(review)))}</textarea>
    </label>
    <label>Note (optional)<textarea name="note" rows="2" maxlength="2000"></textarea></label>
    <button class="change" type="submit">Approve with changes</button>
  </form>`;
  return html`<h2>Your decision</h2>
    <section class="actions">
      ${actions.only === 'decline' ? '' : approve} ${actions.only === 'approve' ? '' : decline}
      ${actions.only === undefined ? change : ''}
      ${actions.only === undefined && actions.grants === true ? grantForm(actions.path, csrf, review) : ''}
    </section>`;
}

/**
 * Approve this call and keep approving calls like it: per argument, exactly this value, at most this
 * number, or one of these values (each offered only where it can narrow the value shown).
 */
function grantForm(path: string, csrf: Html, review: Readonly<Record<string, unknown>>): Html {
  const rows = Object.keys(review).map((name) => {
    const value = review[name];
    const numeric = typeof value === 'number';
    const list = Array.isArray(value) && value.length > 0;
    return html`<tr>
      <th scope="row" dir="ltr">${visible(name)}</th>
      <td>
        <select name="bound:${name}" aria-label="Bound for ${name}">
          <option value="equals">exactly this</option>
          ${numeric ? html`<option value="atMost">at most</option>` : ''}
          ${list ? html`<option value="oneOf">one of</option>` : ''}
        </select>
      </td>
      <td>
        <input
          type="text"
          name="value:${name}"
          dir="ltr"
          aria-label="Bound value for ${name}"
          value="${jsonForEditing(value)}"
        />
      </td>
    </tr>`;
  });
  return html`<form method="post" action="${path}/approve" class="grant">
    <h3>Approve, and keep approving calls like this</h3>
    ${csrf}
    <input type="hidden" name="grant" value="on" />
    <p class="muted">
      For this caller and this tool only. Each bound can only narrow what is shown; every call still runs
      every check, and is recorded.
    </p>
    <table class="bounds">
      <tbody>
        ${rows}
      </tbody>
    </table>
    <label
      >Calls (empty: until the time below)<input type="text" inputmode="numeric" name="grant_uses" value="10"
    /></label>
    <label>For how many hours<input type="text" inputmode="decimal" name="grant_hours" value="8" /></label>
    <label>Note (optional)<textarea name="note" rows="2" maxlength="2000"></textarea></label>
    <button class="approve" type="submit">Approve and grant</button>
  </form>`;
}

export function checkInPage(view: CheckInView): Html {
  const { request } = view.record;
  const state = status(view.now, view.record);
  const argsDiffer = canonicalJson(request.args) !== canonicalJson(request.review);
  return html`${view.notice === undefined ? '' : html`<p class="notice ${view.notice.tone}" role="status">${view.notice.text}</p>`}
    <h1>${visible(request.toolName)} <span class="badge ${state.tone}">${state.text}</span></h1>
    ${facts(view)} ${view.pinDiff ?? ''} ${view.screen ?? ''}
    <h2>Arguments</h2>
    ${argumentTable(request.review)}
    ${
      argsDiffer
        ? html`<h2>As the model sent them</h2>
            ${argumentTable(request.args)}`
        : ''
    }
    ${
      request.evidence === undefined
        ? ''
        : html`<h2>Evidence</h2>
            ${fullValue(request.evidence)}`
    }
    ${
      request.receipts === undefined || request.receipts.length === 0
        ? ''
        : html`<h2>Approved earlier in this call</h2>
            <ul>
              ${request.receipts.map((r) => html`<li>${visible(r.asker)}: approved by ${visible(r.by)} at ${r.approvedAt}</li>`)}
            </ul>`
    }
    ${decisionView(view.record)} ${actionsView(view)}`;
}
