// The tool's own check-in screen (`checkInComponent`): a registered render function fed its props,
// inline or resolved from the artifact store in the call's own scope. A screen that is missing or
// fails is said so, and the arguments below stay the ground truth.

import { scopeOf, type CheckInRequest } from '@toolgate/core';
import { html } from 'hono/html';
import type { InboxContext } from '../options';
import { isHtml, type Html } from './html';
import { visible } from './values';

const frame = (id: string, body: Html | string) =>
  html`<section class="screen" data-component="${id}">
    <h2>${visible(id)}</h2>
    ${body}
  </section>`;

async function propsOf(
  inbox: InboxContext,
  request: CheckInRequest,
): Promise<{ props: unknown } | undefined> {
  const component = request.component!;
  if (component.propsRef === undefined) return { props: component.props };
  if (inbox.artifacts === undefined) return undefined;
  const stored = await inbox.artifacts.get(scopeOf(request.identity), component.propsRef);
  return stored === undefined ? undefined : { props: stored.data };
}

export async function screenView(inbox: InboxContext, request: CheckInRequest): Promise<Html | string> {
  const component = request.component;
  if (component === undefined) return '';
  const screen = Object.hasOwn(inbox.components, component.id) ? inbox.components[component.id] : undefined;
  if (screen === undefined)
    return frame(
      component.id,
      html`<p class="warning">
        This tool asks for a screen this inbox does not have. Decide from the arguments below.
      </p>`,
    );
  try {
    const props = await propsOf(inbox, request);
    if (props === undefined)
      return frame(
        component.id,
        html`<p class="warning">
          This screen's data is no longer available. Decide from the arguments below.
        </p>`,
      );
    const out = await screen(props.props, request);
    // Markup only from an escaping template; anything else is shown as text.
    return frame(component.id, isHtml(out) ? out : html`<p>${String(out)}</p>`);
  } catch {
    return frame(
      component.id,
      html`<p class="warning">This screen could not be shown. Decide from the arguments below.</p>`,
    );
  }
}
