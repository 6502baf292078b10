// Schema patterns on a linear-time engine. A pattern is written by a tool's author, and a tool
// imported over MCP brings a remote server's schema: on a backtracking engine a crafted pattern
// (`^(a+)+$`) stalls the process on a short string. re2js runs in time linear in the input, is pure
// JavaScript (so it runs wherever the chain runs), and refuses the syntax that would need
// backtracking (lookarounds, backreferences) when the schema compiles, not at a call.

import { RE2JS } from 're2js';

export interface LinearRegExp {
  test(text: string): boolean;
  /** ajv keys its cache of compiled patterns by this text. */
  toString(): string;
}

/** Compiles a schema pattern; throws, naming the pattern, when it needs a backtracking feature. */
export function compileLinear(pattern: string): LinearRegExp {
  let engine: RE2JS;
  try {
    engine = RE2JS.compile(pattern);
  } catch (error) {
    const why = error instanceof Error ? error.message : 'it does not parse';
    throw new Error(
      `pattern ${JSON.stringify(pattern)} cannot run on the linear-time engine (${why}); rewrite it without lookarounds or backreferences`,
    );
  }
  return {
    test: (text) => engine.test(text),
    toString: () => `linear:${pattern}`,
  };
}

/** ajv's `code.regExp` engine: every `pattern` and `patternProperties` key compiles here. */
export const linearRegExp = Object.assign((pattern: string) => compileLinear(pattern), {
  code: 'compileLinear',
});
