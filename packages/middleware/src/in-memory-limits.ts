// The default LimitStore: GCRA in one process's memory, on the dispatcher's clock. Per key it keeps
// the time at which the bucket is empty again ("theoretical arrival time"); a charge of n units
// moves it n × window / limit later, and fits while it stays within one window of now.

import { limitChargeProblem, type LimitAnswer, type LimitCharge, type LimitStore } from './limit-store';

/** Floating-point slack, so `limit` charges of one unit fill exactly one window. */
const EPSILON_MS = 1e-6;
/** Every this many consumes, keys whose bucket is full again are dropped. */
const SWEEP_EVERY = 1024;

export interface InMemoryLimits extends LimitStore {
  /** How many keys hold a partly used bucket (for tests and metrics). */
  readonly size: number;
}

const slot = (charge: LimitCharge): string => `${charge.rule}\n${charge.key}`;
const interval = (charge: LimitCharge): number => charge.windowMs / charge.limit;

/**
 * A LimitStore for one process. Time comes from the `now` the gate passes (the dispatcher's clock),
 * so tests move it by hand.
 *
 * @example
 * limitsGate({ store: inMemoryLimits(), limits: [{ name: 'tenant-calls', per: 'tenant', calls: 100, windowMs: 60_000 }] })
 */
export function inMemoryLimits(): InMemoryLimits {
  const arrivals = new Map<string, number>();
  let consumes = 0;
  const sweep = (now: number) => {
    for (const [key, tat] of arrivals) if (tat <= now) arrivals.delete(key);
  };
  return {
    get size() {
      return arrivals.size;
    },
    consume(charges, now): LimitAnswer {
      for (const charge of charges) {
        const problem = limitChargeProblem(charge);
        if (problem !== undefined)
          throw new TypeError(`inMemoryLimits: a charge of '${charge.rule}' is out of bounds: ${problem}.`);
      }
      if (++consumes % SWEEP_EVERY === 0) sweep(now);
      const next: number[] = [];
      let worst: { index: number; overMs: number } | undefined;
      charges.forEach((charge, index) => {
        const tat = Math.max(arrivals.get(slot(charge)) ?? now, now) + charge.amount * interval(charge);
        const overMs = tat - now - charge.windowMs;
        if (overMs > EPSILON_MS && (worst === undefined || overMs > worst.overMs)) worst = { index, overMs };
        next.push(tat);
      });
      if (worst !== undefined) {
        return { allowed: false, index: worst.index, retryAfterMs: Math.ceil(worst.overMs) };
      }
      charges.forEach((charge, index) => arrivals.set(slot(charge), next[index]!));
      return { allowed: true };
    },
    refund(charges, now) {
      for (const charge of charges) {
        const key = slot(charge);
        const tat = arrivals.get(key);
        if (tat === undefined) continue;
        const back = tat - charge.amount * interval(charge);
        if (back <= now) arrivals.delete(key);
        else arrivals.set(key, back);
      }
    },
  };
}
