import { someString } from '../src/internal/values';

describe('someString', () => {
  const value = { to: ['a@example.com', { cc: 'b@example.com' }], n: 7, when: new Date(0) };

  it('hands a two-parameter visit every string with where it stands', () => {
    const seen: [string, string][] = [];
    someString(value, (text, at) => (seen.push([text, at]), false), { numbers: true });
    expect(seen).toEqual(
      expect.arrayContaining([
        ['to', ''],
        ['a@example.com', 'to.0'],
        ['cc', 'to.1'],
        ['b@example.com', 'to.1.cc'],
        ['7', 'n'],
        ['"1970-01-01T00:00:00.000Z"', 'when'],
      ]),
    );
    expect(seen).toHaveLength(8);
  });

  it("hands a one-parameter visit the same strings and '' for where (no path is built)", () => {
    const texts: string[] = [];
    const places = new Set<unknown>();
    someString(value, function (this: unknown, text: string) {
      texts.push(text);
      // eslint-disable-next-line prefer-rest-params
      places.add(arguments[1]);
      return false;
    });
    expect(texts).toEqual(
      expect.arrayContaining(['to', 'a@example.com', 'cc', 'b@example.com', 'n', 'when']),
    );
    expect([...places]).toEqual(['']);
  });

  it('stops at the first string the visit accepts', () => {
    const texts: string[] = [];
    expect(someString(value, (text) => (texts.push(text), text.startsWith('a@')))).toBe(true);
    expect(texts.at(-1)).toBe('a@example.com');
  });
});
