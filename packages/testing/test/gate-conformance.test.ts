// Every gate shipped in @toolgate/middleware through the middleware laws, each configured so it acts.

import { scopeOf, type ArtifactStore, type PermissionChecker } from '@toolgate/core';
import {
  ajvValidator,
  capabilitiesGate,
  checkInGate,
  credentialsGate,
  permissionGate,
  resultCeilingGate,
  validateArgsGate,
  wantsGate,
} from '@toolgate/middleware';
import { inMemoryArtifacts, staticCredentials, staticPermissions } from '@toolgate/testing';
import { describeMiddlewareConformance } from '@toolgate/testing/jest';

const ACME = { tenant: 'acme', principal: 'ana' };
const GLOBEX = { tenant: 'globex', principal: 'bob' };

const throwingChecker: PermissionChecker = {
  governs: ['payments'],
  check: () => {
    throw new Error('directory unavailable');
  },
};

describeMiddlewareConformance(
  'permissionGate',
  () => permissionGate(staticPermissions([{ tenant: 'acme', allow: true }])),
  {
    identity: ACME,
    refused: { identity: GLOBEX },
    broken: () => permissionGate(throwingChecker),
  },
);

describeMiddlewareConformance(
  'capabilitiesGate',
  () => capabilitiesGate(staticPermissions([{ capability: 'payments', tenant: 'acme', allow: true }])),
  {
    tool: { capabilities: ['payments'] },
    identity: ACME,
    refused: { identity: GLOBEX },
    broken: () => capabilitiesGate(throwingChecker),
  },
);

describeMiddlewareConformance('validateArgsGate', () => validateArgsGate(), {
  tool: {
    inputSchema: {
      type: 'object',
      properties: { amount: { type: 'number' }, note: { type: 'string' } },
      required: ['amount'],
    },
  },
  args: { amount: 12 },
  refused: { args: { amount: 'twelve' } },
  broken: () =>
    validateArgsGate({
      validator: {
        compile: () => () => {
          throw new Error('validator crashed');
        },
      },
    }),
});

const artifacts = inMemoryArtifacts();
const failingArtifacts: ArtifactStore = {
  put: () => Promise.reject(new Error('disk full')),
  get: () => Promise.reject(new Error('disk full')),
  list: () => Promise.reject(new Error('disk full')),
};

describeMiddlewareConformance('wantsGate', () => wantsGate({ store: artifacts }), {
  tool: { wants: { rows: 'dataset/rows' } },
  identity: ACME,
  args: async (identity) => ({
    rows: await artifacts.put(scopeOf(identity), { kind: 'dataset/rows', data: [{ id: 1 }] }),
  }),
  refused: { args: { rows: `art_${'0'.repeat(22)}` } },
  broken: () => wantsGate({ store: failingArtifacts }),
});

describeMiddlewareConformance('checkInGate', () => checkInGate(), {
  tool: { checkIn: 'always' },
  identity: ACME,
  broken: () =>
    checkInGate({
      evidence: () => {
        throw new Error('evidence service down');
      },
    }),
});

describeMiddlewareConformance(
  'credentialsGate',
  () => credentialsGate(staticCredentials({ billing: 'sk_test_conformance' })),
  {
    tool: { needs: { kind: 'api_key', service: 'billing' } },
    refused: { tool: { needs: { kind: 'api_key', service: 'payroll' } } },
    broken: () => credentialsGate(staticCredentials({})),
  },
);

describeMiddlewareConformance('resultCeilingGate', () => resultCeilingGate(), {
  tool: { resultCeiling: { maxChars: 100, narrowBy: ['limit'] } },
  refused: { tool: { result: 'x'.repeat(101) } },
});

describeMiddlewareConformance(
  'resultCeilingGate with an operator default',
  () => resultCeilingGate({ defaultMaxChars: 50 }),
  {
    refused: { tool: { result: 'x'.repeat(51) } },
  },
);

describeMiddlewareConformance(
  'validateArgsGate applying schema defaults',
  () => validateArgsGate({ validator: ajvValidator() }),
  {
    tool: {
      inputSchema: {
        type: 'object',
        properties: { limit: { type: 'integer', default: 10 }, note: { type: 'string' } },
      },
    },
    refused: { args: { limit: 2.5 } },
  },
);
