// A stdio upstream's stderr as warn lines (`upstream.stderr`) naming the upstream: what a crashing
// or misconfigured server says is often the only clue. Each line is cut to a bounded length, the
// values the gateway handed the server (its configured env, credentials filled in) are redacted, as
// are bearer tokens and `key=value` pairs whose key names a secret; a chatty server is held to a
// bounded rate, the rest counted in one `upstream.stderr-dropped` line.

import type { Readable } from 'node:stream';
import { redact } from '@toolgate/core';
import type { LogFields } from './log';

const MAX_LINE_CHARS = 500;
const LINES_PER_WINDOW = 50;
const WINDOW_MS = 10_000;
// Shorter values (ports, flags, "1") would redact half of every line and protect nothing.
const MIN_SECRET_CHARS = 6;

const SECRET_PATTERNS: readonly RegExp[] = [
  /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi,
  /\b([A-Za-z0-9_-]*(?:token|secret|password|passwd|api[_-]?key|credential)[A-Za-z0-9_-]*)(\s*[=:]\s*)("[^"]*"|'[^']*'|\S+)/gi,
  /\b(sk|pk|rk|ghp|gho|xox[abpr])[-_][A-Za-z0-9_-]{12,}/g,
];

/** `text` without the given values and without what looks like a credential. */
export function redactStderr(text: string, secrets: readonly string[]): string {
  let clean = redact(text, secrets);
  clean = clean.replace(SECRET_PATTERNS[0]!, (_match, scheme: string) => `${scheme} [redacted]`);
  clean = clean.replace(SECRET_PATTERNS[1]!, (_match, key: string, sep: string) => `${key}${sep}[redacted]`);
  clean = clean.replace(SECRET_PATTERNS[2]!, '[redacted]');
  return clean;
}

export function followStderr(
  upstream: string,
  stream: Readable,
  secretValues: readonly string[],
  log: (fields: LogFields) => void,
  now: () => number = Date.now,
): void {
  const secrets = secretValues.filter((value) => value.length >= MIN_SECRET_CHARS);
  let buffer = '';
  let windowStart = now();
  let inWindow = 0;
  let dropped = 0;

  const emit = (raw: string) => {
    const text = raw.replace(/\r$/, '');
    if (text.trim() === '') return;
    if (now() - windowStart >= WINDOW_MS) {
      if (dropped > 0) log({ msg: 'upstream.stderr-dropped', level: 'warn', upstream, lines: dropped });
      windowStart = now();
      inWindow = 0;
      dropped = 0;
    }
    if (inWindow >= LINES_PER_WINDOW) {
      dropped += 1;
      return;
    }
    inWindow += 1;
    // Redact before cutting, so a secret across the cut cannot survive in part.
    const clean = redactStderr(text, secrets);
    const cut = clean.length > MAX_LINE_CHARS ? `${clean.slice(0, MAX_LINE_CHARS)}…` : clean;
    log({ msg: 'upstream.stderr', level: 'warn', upstream, line: cut });
  };

  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    buffer += chunk;
    let index: number;
    while ((index = buffer.indexOf('\n')) >= 0) {
      emit(buffer.slice(0, index));
      buffer = buffer.slice(index + 1);
    }
    // One endless line must not grow without bound.
    if (buffer.length > MAX_LINE_CHARS * 8) {
      emit(buffer);
      buffer = '';
    }
  });
  stream.on('end', () => {
    if (buffer !== '') emit(buffer);
    buffer = '';
  });
  stream.on('error', () => undefined);
}
