// gateway.events: one typed map of event names and their lines (src/events.ts).

import { once } from 'node:events';
import type { GatewayEventLine } from '@toolgate/gateway';
import { createLog } from '../src/log';

describe('the typed event map', () => {
  it('a listener gets the line of the event it listens to, with the common fields', async () => {
    const log = createLog(undefined);
    const seen = once(log.events, 'upstream.restarted') as Promise<[GatewayEventLine<'upstream.restarted'>]>;
    log({ msg: 'upstream.restarted', upstream: 'shop', restarts: 2 });
    const [line] = await seen;
    expect(line).toMatchObject({ event: 'upstream.restarted', level: 'info', upstream: 'shop', restarts: 2 });
    expect(Number.isNaN(Date.parse(line.time))).toBe(false);
  });

  it('types the payload by name (checked by the typechecker)', () => {
    const log = createLog(undefined);
    const restarts: number[] = [];
    log.events.on('upstream.restarted', (line) => restarts.push(line.restarts));
    // @ts-expect-error `upstream.down` carries `why`, not `restarts`
    log.events.on('upstream.down', (line) => restarts.push(line.restarts));
    // @ts-expect-error no event of that name
    log.events.on('upstream.restartd', () => undefined);
    log({ msg: 'upstream.restarted', upstream: 'shop', restarts: 3 });
    expect(restarts).toEqual([3]);
  });
});
