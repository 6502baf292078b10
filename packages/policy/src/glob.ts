// Tool-name globs, as policy rules and the gateway's configuration write them: `*` any run of
// characters, `?` one character, everything else itself. One matcher for both, so a glob never
// means one thing in a rule and another in an upstream's `include` or a limit's `tools`.

// Configurations hold a few dozen globs; the cap only keeps a stream of reloads from growing it forever.
const MAX_CACHED = 1024;
const cache = new Map<string, RegExp>();

/** The globs as one anchored RegExp over tool names: a name matches when any glob does. */
export function toolGlob(globs: string | readonly string[]): RegExp {
  const list = typeof globs === 'string' ? [globs] : globs;
  const key = list.join('\u0000');
  let pattern = cache.get(key);
  if (pattern === undefined) {
    const parts = list.map((glob) =>
      glob
        .replace(/[.+^${}()|[\]\\-]/g, '\\$&')
        .replace(/\*/g, '.*')
        .replace(/\?/g, '.'),
    );
    pattern = new RegExp(`^(?:${parts.join('|')})$`);
    if (cache.size >= MAX_CACHED) cache.clear();
    cache.set(key, pattern);
  }
  return pattern;
}

/** Whether `name` matches any of `globs` (none: no match). */
export function matchesToolGlob(name: string, globs: string | readonly string[]): boolean {
  return (typeof globs === 'string' || globs.length > 0) && toolGlob(globs).test(name);
}
