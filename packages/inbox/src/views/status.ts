// The operator's status page: upstreams and their state, pinned tools whose served definition
// changed (with the diff), recent reloads, and the audit log's head. Read-only; every value is
// interpolated through hono/html, so a hostile upstream name, error or definition stays text.

import { html } from 'hono/html';
import { pinDiffView, type PinDiff } from './diff';
import type { Html } from './html';

/** What the status page shows; the host (the gateway) gathers it from its live configuration. */
export interface OperatorStatus {
  readonly upstreams: readonly {
    readonly name: string;
    readonly state: string;
    readonly tools: number;
    readonly restarts: number;
    /** Why it is not connected, in words that name no secret. */
    readonly error?: string;
  }[];
  /** Tools whose served definition differs from the pin: refused until accepted. */
  readonly pins: readonly {
    readonly upstream: string;
    readonly tool: string;
    readonly seenAt: string;
    readonly diff: PinDiff;
  }[];
  /** Newest first. */
  readonly reloads: readonly {
    readonly at: string;
    readonly ok: boolean;
    /** For a refused reload: how many problems, and the first in words. */
    readonly issues?: number;
    readonly error?: string;
  }[];
  /** Undefined when no audit log is configured. */
  readonly audit?: {
    readonly kind: string;
    readonly head?: { readonly seq: number; readonly hash: string };
    /** Records accepted but not yet stored. */
    readonly pending: number;
    /** The last checkpoint published (`audit.checkpoints`); undefined when none is configured. */
    readonly checkpoint?: { readonly configured: true; readonly seq?: number; readonly at?: string };
    /** False when the store did not answer. */
    readonly reachable: boolean;
  };
}

export function statusPage(status: OperatorStatus): Html {
  return html`<h1>Gateway status</h1>
    <section class="status-upstreams">
      <h2>Upstreams</h2>
      <table>
        <thead>
          <tr>
            <th>Upstream</th>
            <th>State</th>
            <th>Tools</th>
            <th>Restarts</th>
            <th>Why</th>
          </tr>
        </thead>
        <tbody>
          ${status.upstreams.map(
            (upstream) =>
              html`<tr data-upstream="${upstream.name}">
                <td>${upstream.name}</td>
                <td class="${upstream.state === 'connected' ? 'good' : 'bad'}">${upstream.state}</td>
                <td>${upstream.tools}</td>
                <td>${upstream.restarts}</td>
                <td>${upstream.error ?? ''}</td>
              </tr>`,
          )}
        </tbody>
      </table>
    </section>
    <section class="status-pins">
      <h2>Pins waiting for review</h2>
      ${
        status.pins.length === 0
          ? html`<p>No tool definition changed from its pin.</p>`
          : status.pins.map(
              (pin) =>
                html`<article class="pin" data-tool="${pin.tool}">
                  <h3>${pin.tool} <small>(${pin.upstream}, served since ${pin.seenAt})</small></h3>
                  ${pinDiffView(pin.diff)}
                  <p>Refused until accepted: <code>toolgate pins accept ${pin.tool}</code></p>
                </article>`,
            )
      }
    </section>
    <section class="status-reloads">
      <h2>Recent reloads</h2>
      ${
        status.reloads.length === 0
          ? html`<p>No reload since the gateway started.</p>`
          : html`<ul>
              ${status.reloads.map(
                (reload) =>
                  html`<li class="${reload.ok ? 'good' : 'bad'}">
                    <time datetime="${reload.at}">${reload.at}</time>
                    ${
                      reload.ok
                        ? 'applied'
                        : html`refused (${reload.issues ?? 1} problem(s)):
                            <span class="error">${reload.error ?? ''}</span>`
                    }
                  </li>`,
              )}
            </ul>`
      }
    </section>
    <section class="status-audit">
      <h2>Audit log</h2>
      ${
        status.audit === undefined
          ? html`<p>No audit log is configured.</p>`
          : html`<dl>
              <dt>Store</dt>
              <dd>
                ${status.audit.kind}${status.audit.reachable ? '' : html` <span class="bad">not reachable</span>`}
              </dd>
              <dt>Head</dt>
              <dd>
                ${
                  status.audit.head === undefined
                    ? 'empty'
                    : html`record ${status.audit.head.seq}, hash <code>${status.audit.head.hash}</code>`
                }
              </dd>
              <dt>Waiting to be stored</dt>
              <dd>${status.audit.pending}</dd>
              <dt>Last checkpoint</dt>
              <dd>
                ${
                  status.audit.checkpoint === undefined
                    ? 'none (audit.checkpoints is not configured)'
                    : status.audit.checkpoint.seq === undefined
                      ? 'none published yet'
                      : html`record ${status.audit.checkpoint.seq} at
                          <time datetime="${status.audit.checkpoint.at ?? ''}"
                            >${status.audit.checkpoint.at ?? ''}</time
                          >`
                }
              </dd>
            </dl>`
      }
    </section>`;
}
