// The gateway's generations: a reload's generation serves new calls at once; the replaced one
// closes what the new one does not reuse, only after its last call has finished.

import { gatewayGenerations } from '../src/generations';
import { inFlightCounter } from '../src/in-flight';
import type { Runtime } from '../src/runtime';

interface Part {
  readonly name: string;
  close(): Promise<void>;
}

function generation(closed: string[], parts: { state: Part; limits: Part; telemetry: Part }) {
  const calls = inFlightCounter();
  const runtime = {
    ...parts,
    upstreams: new Map<string, Part>(),
    hold: () => calls.begin(),
    release: () => calls.end(),
    idle: () => calls.idle(),
  };
  return { runtime: runtime as unknown as Runtime, closed };
}

const part = (closed: string[], name: string): Part => ({
  name,
  close: async () => {
    closed.push(name);
  },
});

const settle = () => new Promise((done) => setImmediate(done));

describe('gatewayGenerations', () => {
  it('serves the new generation at once and closes the parts only the old one holds once its calls finish', async () => {
    const closed: string[] = [];
    const kept = part(closed, 'state (kept)');
    const old = generation(closed, {
      state: kept,
      limits: part(closed, 'old limits'),
      telemetry: part(closed, 'old telemetry'),
    }).runtime;
    const next = generation(closed, {
      state: kept,
      limits: part(closed, 'new limits'),
      telemetry: part(closed, 'new telemetry'),
    }).runtime;
    const generations = gatewayGenerations(old);
    old.hold();
    expect(generations.replace(next)).toBe(old);
    expect(generations.current()).toBe(next);
    await settle();
    expect(closed).toEqual([]);
    old.release();
    await settle();
    expect(closed.sort()).toEqual(['old limits', 'old telemetry']);
  });

  it('closes every part of the current generation on close', async () => {
    const closed: string[] = [];
    const only = generation(closed, {
      state: part(closed, 'state'),
      limits: part(closed, 'limits'),
      telemetry: part(closed, 'telemetry'),
    }).runtime;
    await gatewayGenerations(only).close();
    expect(closed.sort()).toEqual(['limits', 'state', 'telemetry']);
  });
});
