// Schemas and args that every SchemaValidator must judge alike, word for word: the ajv default and
// the eval-free one are both checked against them, on Node in jest and on each runtime by the
// portability suite.

import type { JsonSchema } from '@toolgate/core';

export interface SchemaCase {
  readonly name: string;
  readonly schema: JsonSchema;
  readonly args: Record<string, unknown>;
}

const order: JsonSchema = {
  type: 'object',
  required: ['id', 'email'],
  additionalProperties: false,
  properties: {
    id: { type: 'integer', minimum: 1 },
    email: { type: 'string', format: 'email' },
    note: { type: 'string', maxLength: 20 },
    tags: { type: 'array', items: { type: 'string', maxLength: 3 }, maxItems: 2 },
    priority: { enum: ['low', 'high'] },
  },
};

// JSON Schema 2020-12 as MCP servers write it: a named definition, and a recursive tree.
const anchored: JsonSchema = {
  type: 'object',
  required: ['from'],
  properties: { from: { $ref: '#address' }, to: { $ref: '#address' } },
  $defs: {
    address: {
      $anchor: 'address',
      type: 'object',
      required: ['city'],
      properties: { city: { type: 'string' }, zip: { type: 'string', pattern: '^[0-9]{4}$' } },
    },
  },
};

const tree: JsonSchema = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $dynamicAnchor: 'node',
  type: 'object',
  required: ['label'],
  properties: {
    label: { type: 'string' },
    open: { type: 'boolean', default: false },
    children: { type: 'array', items: { $dynamicRef: '#node' } },
  },
};

export const SCHEMA_CASES: readonly SchemaCase[] = [
  { name: 'valid args', schema: order, args: { id: 3, email: 'a@b.co', tags: ['x'] } },
  { name: 'a missing required property', schema: order, args: { id: 3 } },
  { name: 'a wrong type', schema: order, args: { id: 'three', email: 'a@b.co' } },
  { name: 'a fraction where an integer is due', schema: order, args: { id: 1.5, email: 'a@b.co' } },
  { name: 'a made-up property', schema: order, args: { id: 3, email: 'a@b.co', refundAll: true } },
  { name: 'a value outside the enum', schema: order, args: { id: 3, email: 'a@b.co', priority: 'urgent' } },
  { name: 'a number under its minimum', schema: order, args: { id: 0, email: 'a@b.co' } },
  {
    name: 'a string over its maxLength',
    schema: order,
    args: { id: 3, email: 'a@b.co', note: 'x'.repeat(21) },
  },
  { name: 'a malformed email', schema: order, args: { id: 3, email: 'not-an-email' } },
  {
    name: 'an array item of the wrong shape',
    schema: order,
    args: { id: 3, email: 'a@b.co', tags: ['ok', 'long'] },
  },
  { name: 'too many array items', schema: order, args: { id: 3, email: 'a@b.co', tags: ['a', 'b', 'c'] } },
  {
    name: 'several problems at once',
    schema: order,
    args: { id: -1, extra: 1, tags: ['aaaa', 7, 'c'], priority: 'z' },
  },
  {
    name: 'number bounds and multipleOf',
    schema: {
      type: 'object',
      properties: {
        a: { type: 'number', maximum: 10 },
        b: { type: 'number', exclusiveMinimum: 0 },
        c: { type: 'number', exclusiveMaximum: 1, multipleOf: 2 },
      },
    },
    args: { a: 11, b: 0, c: 3 },
  },
  {
    name: 'string length and pattern',
    schema: {
      type: 'object',
      properties: { sku: { type: 'string', minLength: 4, pattern: '^[A-Z]{2}-[0-9]+$' } },
    },
    args: { sku: 'ab' },
  },
  {
    name: 'a pattern that matches',
    schema: { type: 'object', properties: { sku: { type: 'string', pattern: '^[A-Z]{2}-[0-9]+$' } } },
    args: { sku: 'AB-12' },
  },
  {
    name: 'formats: date-time, uri, uuid',
    schema: {
      type: 'object',
      properties: {
        at: { type: 'string', format: 'date-time' },
        link: { type: 'string', format: 'uri' },
        id: { type: 'string', format: 'uuid' },
      },
    },
    args: { at: 'yesterday', link: 'not a uri', id: '1234' },
  },
  {
    name: 'nested objects name their path',
    schema: {
      type: 'object',
      properties: {
        customer: {
          type: 'object',
          required: ['name'],
          properties: {
            name: { type: 'string' },
            address: { type: 'object', properties: { zip: { type: 'string' } } },
          },
        },
      },
    },
    args: { customer: { address: { zip: 12345 } } },
  },
  {
    name: 'a const',
    schema: { type: 'object', properties: { confirm: { const: true } } },
    args: { confirm: false },
  },
  {
    name: 'a union of types',
    schema: { type: 'object', properties: { amount: { anyOf: [{ type: 'string' }, { type: 'number' }] } } },
    args: { amount: true },
  },
  {
    name: 'a nullable type list',
    schema: { type: 'object', properties: { label: { type: ['string', 'null'] } } },
    args: { label: 5 },
  },
  {
    name: 'oneOf between object forms',
    schema: {
      type: 'object',
      properties: {
        target: {
          oneOf: [
            { type: 'object', required: ['email'], properties: { email: { type: 'string' } } },
            { type: 'object', required: ['phone'], properties: { phone: { type: 'string' } } },
          ],
        },
      },
    },
    args: { target: { fax: '1' } },
  },
  {
    name: 'not',
    schema: { type: 'object', properties: { name: { not: { const: 'root' } } } },
    args: { name: 'root' },
  },
  {
    name: 'if/then',
    schema: {
      type: 'object',
      properties: { kind: { type: 'string' }, amount: { type: 'number' } },
      if: { properties: { kind: { const: 'refund' } }, required: ['kind'] },
      then: { required: ['amount'] },
    },
    args: { kind: 'refund' },
  },
  {
    name: 'dependencies',
    schema: { type: 'object', dependencies: { card: ['cvc', 'expiry'] } },
    args: { card: '4242', expiry: '12/30' },
  },
  {
    name: 'unique items and item counts',
    schema: { type: 'object', properties: { ids: { type: 'array', minItems: 3, uniqueItems: true } } },
    args: { ids: ['a', 'a'] },
  },
  {
    name: 'property counts',
    schema: { type: 'object', properties: { meta: { type: 'object', maxProperties: 1 } } },
    args: { meta: { a: 1, b: 2 } },
  },
  {
    name: 'draft 2020-12 with $defs, $ref and prefixItems',
    schema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      $defs: { money: { type: 'number', minimum: 0 } },
      properties: {
        amount: { $ref: '#/$defs/money' },
        pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'integer' }] },
      },
    },
    args: { amount: -5, pair: [1, 'x'] },
  },
  {
    name: 'arrays of objects',
    schema: {
      type: 'object',
      properties: {
        lines: {
          type: 'array',
          items: {
            type: 'object',
            required: ['sku'],
            properties: { sku: { type: 'string' }, qty: { type: 'integer' } },
          },
        },
      },
    },
    args: { lines: [{ sku: 'a', qty: 1 }, { qty: 'two' }] },
  },
  {
    name: 'a reference by $anchor (2020-12, read so without a $schema)',
    schema: anchored,
    args: { from: { city: 'Oslo' }, to: { city: 7, zip: 'x' } },
  },
  { name: 'a reference by $anchor, valid', schema: anchored, args: { from: { city: 'Oslo' } } },
  {
    name: 'a recursive tree through $dynamicRef',
    schema: tree,
    args: { label: 'root', children: [{ label: 'a', children: [{ label: 3 }] }, { children: [] }] },
  },
  {
    name: 'a recursive tree through $dynamicRef, valid, with defaults deep down',
    schema: tree,
    args: { label: 'root', children: [{ label: 'a', children: [{ label: 'b' }] }] },
  },
  {
    name: 'defaults are applied',
    schema: {
      type: 'object',
      properties: { limit: { type: 'integer', default: 10 }, sort: { type: 'string', default: 'asc' } },
    },
    args: { sort: 'desc' },
  },
];
