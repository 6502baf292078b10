// The page around every view: one stylesheet, one script, no inline script or style, and the
// signed-in approver with a sign-out form that carries its CSRF token.

import { html } from 'hono/html';
import type { Session } from '../session';
import type { Html } from './html';

export interface Frame {
  readonly base: string;
  readonly title: string;
  readonly session?: Session;
}

export function layout(frame: Frame, body: Html | string): Html {
  const { base, session } = frame;
  const approver = session?.approver;
  const tenants =
    approver === undefined ? '' : approver.tenants === 'all' ? 'all tenants' : approver.tenants.join(', ');
  return html`<!doctype html>
    <html lang="en" data-base="${base}">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="same-origin" />
        <title>${frame.title} · toolgate inbox</title>
        <link rel="stylesheet" href="${base}/static/inbox.css" />
        <script src="${base}/static/inbox.js" defer></script>
      </head>
      <body>
        <header class="top">
          <a class="brand" href="${base}/">toolgate inbox</a>
          ${approver === undefined ? '' : html`<a href="${base}/grants">Grants</a>`}
          ${
            approver === undefined
              ? ''
              : html`<span class="who">${approver.name ?? approver.id} · ${tenants}</span> ${
                    session?.via === 'cookie'
                      ? html`<form method="post" action="${base}/sign-out">
                          <input type="hidden" name="_csrf" value="${session.csrf}" />
                          <button class="plain" type="submit">Sign out</button>
                        </form>`
                      : ''
                  }`
          }
        </header>
        <main>${body}</main>
      </body>
    </html>`;
}
