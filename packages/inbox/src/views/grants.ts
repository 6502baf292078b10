// The standing grants an approver may see: who and what each covers, its bounds, uses and time left,
// and a revoke form (with the session's CSRF token) on each one that can still answer a call.

import { grantActive, type StandingGrant } from '@toolgate/core';
import { html } from 'hono/html';
import { boundText } from '../grants';
import type { Notice } from './check-in';
import type { Html } from './html';
import { left } from './time';
import { visible } from './values';

export interface GrantsView {
  readonly base: string;
  readonly now: number;
  readonly grants: readonly StandingGrant[];
  readonly csrf: string;
  readonly enabled: boolean;
  /** What became of the last action here, when the list alone does not show it. */
  readonly notice?: Notice;
}

function row(view: GrantsView, grant: StandingGrant): Html {
  const active = grantActive(grant, view.now);
  const state = grant.revoked === true ? 'revoked' : active ? 'active' : 'ended';
  return html`<tr data-grant="${grant.id}">
    <td>${visible(grant.toolName)}</td>
    <td>
      ${visible(grant.principal ?? 'unknown')}${grant.tenant === undefined ? '' : html` <span class="muted">· ${visible(grant.tenant)}</span>`}
    </td>
    <td dir="ltr">
      ${Object.entries(grant.bounds).map(([name, bound]) => html`<div>${visible(name)} ${visible(boundText(bound))}</div>`)}
    </td>
    <td>${grant.uses}${grant.maxUses === undefined ? '' : ` of ${grant.maxUses}`}</td>
    <td>
      <time datetime="${grant.expiresAt}" data-expires="${grant.expiresAt}"
        >${left(view.now, grant.expiresAt)}</time
      >
    </td>
    <td>${visible(grant.createdBy)}</td>
    <td>
      <span class="badge ${active ? 'approved' : 'declined'}">${state}</span>
      ${
        grant.revoked === true
          ? ''
          : html`<form method="post" action="${view.base}/grants/${grant.id}/revoke">
              <input type="hidden" name="_csrf" value="${view.csrf}" />
              <button class="decline" type="submit">Revoke</button>
            </form>`
      }
    </td>
  </tr>`;
}

export function grantsPage(view: GrantsView): Html {
  if (!view.enabled)
    return html`<h1>Standing grants</h1>
      <p class="muted">Standing grants are not enabled on this inbox.</p>`;
  return html`<h1>Standing grants</h1>
    ${view.notice === undefined ? '' : html`<p class="notice ${view.notice.tone}" role="status">${view.notice.text}</p>`}
    <p><a href="${view.base}/">Back to the list</a></p>
    ${
      view.grants.length === 0
        ? html`<p class="muted">No standing grants.</p>`
        : html`<table id="grants">
            <thead>
              <tr>
                <th>Tool</th>
                <th>For</th>
                <th>Arguments within</th>
                <th>Used</th>
                <th>Time left</th>
                <th>Granted by</th>
                <th></th>
              </tr>
            </thead>
            <tbody>
              ${view.grants.map((grant) => row(view, grant))}
            </tbody>
          </table>`
    }`;
}
