// describeMiddlewareConformance: the middleware laws as a jest suite, for any middleware.

import { describe, it } from '@jest/globals';
import {
  MIDDLEWARE_LAWS,
  type MiddlewareConformanceOptions,
  type MiddlewareFactory,
} from './middleware-laws';

/**
 * Registers one test per middleware law: reaches the tool when allowed, calls next at most once,
 * cannot answer for the tool, fails closed on a throw, forwards the call's signal, leaks no arg value.
 * `factory` is called for every test; `options` describes a call the middleware allows (and, optionally,
 * one it refuses and a variant whose dependency fails).
 *
 * @example
 * describeMiddlewareConformance('tenant-policy', () => tenantPolicy({ allowed: ['acme'] }), {
 *   identity: { tenant: 'acme' },
 *   refused: { identity: { tenant: 'globex' } },
 * });
 */
export function describeMiddlewareConformance(
  name: string,
  factory: MiddlewareFactory,
  options: MiddlewareConformanceOptions = {},
): void {
  if (typeof factory !== 'function')
    throw new TypeError('describeMiddlewareConformance: factory must be a function () => Middleware.');
  describe(`${name}: middleware conformance`, () => {
    for (const law of MIDDLEWARE_LAWS) {
      if (law.applies !== undefined && !law.applies(options)) continue;
      it(law.title, () => law.check({ factory, options }));
    }
  });
}
