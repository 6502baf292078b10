// Tool-name globs as the configuration writes them: `*` any run of characters, `?` one character.

const cache = new Map<string, RegExp>();

export function globMatcher(glob: string): RegExp {
  let pattern = cache.get(glob);
  if (pattern === undefined) {
    const body = glob
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.');
    pattern = new RegExp(`^${body}$`);
    cache.set(glob, pattern);
  }
  return pattern;
}

export function matchesAny(name: string, globs: readonly string[]): boolean {
  return globs.some((glob) => globMatcher(glob).test(name));
}
