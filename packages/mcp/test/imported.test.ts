import { closedSchema, escapeInvisible, hintHolds, invisibleIn, mergeDeclarations } from '../src/imported';

describe('closedSchema', () => {
  it('closes every object with properties, all the way down, and leaves what it did not declare as it was', () => {
    const schema = {
      type: 'object',
      properties: {
        items: { type: 'array', items: { type: 'object', properties: { id: { type: 'string' } } } },
        open: { type: 'object', properties: { a: {} }, additionalProperties: true },
        map: { type: 'object', additionalProperties: { type: 'object', properties: { b: {} } } },
      },
    };
    expect(closedSchema(schema)).toEqual({
      type: 'object',
      additionalProperties: false,
      properties: {
        items: {
          type: 'array',
          items: { type: 'object', properties: { id: { type: 'string' } }, additionalProperties: false },
        },
        open: { type: 'object', properties: { a: {} }, additionalProperties: true },
        map: {
          type: 'object',
          additionalProperties: { type: 'object', properties: { b: {} }, additionalProperties: false },
        },
      },
    });
    expect(schema.properties.items.items).not.toHaveProperty('additionalProperties');
  });

  it('leaves composed objects and the branches of an allOf open, so the server still gets what it accepts', () => {
    const schema = {
      type: 'object',
      properties: { a: {} },
      allOf: [{ properties: { b: {} } }, { properties: { c: {} } }],
    };
    expect(closedSchema(schema)).toEqual(schema);
    const ref = {
      type: 'object',
      properties: { a: {} },
      $ref: '#/$defs/x',
      $defs: { x: { properties: { y: {} } } },
    };
    expect(closedSchema(ref)).toEqual({
      ...ref,
      $defs: { x: { properties: { y: {} }, additionalProperties: false } },
    });
  });
});

describe('invisible characters', () => {
  it('finds zero-width, bidi-control and tag characters, and writes them out', () => {
    const tag = String.fromCodePoint(0xe0041);
    const text = `add\u200Bnumbers\u202E${tag} ok ⚠️ émoji`;
    expect(invisibleIn(text)).toEqual(['\\u{200B}', '\\u{202E}', '\\u{E0041}']);
    expect(escapeInvisible(text)).toBe('add\\u{200B}numbers\\u{202E}\\u{E0041} ok ⚠️ émoji');
    expect(invisibleIn('Plain text, accents é and emoji ⚠️ are visible.')).toEqual([]);
  });
});

describe('annotation hints', () => {
  it("takes MCP's defaults for a hint left out, and a read-only tool is never destructive", () => {
    expect(hintHolds(undefined, 'destructiveHint')).toBe(true);
    expect(hintHolds(undefined, 'openWorldHint')).toBe(true);
    expect(hintHolds({ readOnlyHint: true }, 'destructiveHint')).toBe(false);
    expect(hintHolds({ readOnlyHint: true, destructiveHint: true }, 'destructiveHint')).toBe(false);
    expect(hintHolds({ destructiveHint: false }, 'destructiveHint')).toBe(false);
    expect(hintHolds({ openWorldHint: false }, 'openWorldHint')).toBe(false);
  });

  it('merges declarations: capabilities add up, always wins, the later ceiling and need win', () => {
    const predicate = () => true;
    expect(
      mergeDeclarations([
        { checkIn: 'always', capabilities: ['external_net'] },
        { checkIn: predicate, capabilities: ['external_net', 'payments'], resultCeiling: { maxChars: 10 } },
        { resultCeiling: { maxChars: 20 } },
      ]),
    ).toEqual({
      checkIn: 'always',
      capabilities: ['external_net', 'payments'],
      resultCeiling: { maxChars: 20 },
    });
  });
});
