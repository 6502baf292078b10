// The last lines an stdio upstream wrote to stderr before its MCP handshake, so a server that fails to
// start is reported with its own reason. Only what it printed before the handshake completes is kept:
// after that its stderr may echo the calls it serves, and is drained unread. Credential values the
// gateway handed it, and anything that looks like a secret, are redacted before a line is kept.

import type { Readable } from 'node:stream';

/** Lines kept, and characters kept of each. */
const MAX_LINES = 10;
const MAX_LINE_CHARS = 200;
const REDACTED = '[redacted]';

/** `name=value` / `name: value` where the name says it is secret, and bearer tokens. */
const SECRET_PAIR =
  /\b([\w-]*(?:token|secret|passw(?:or)?d|api[_-]?key|auth(?:orization)?|credential|cookie)[\w-]*)(["']?\s*[:=]\s*["']?)(?:(?:Bearer|Basic)\s+)?[^\s"',;&]+/gi;
const BEARER = /\b(Bearer|Basic)\s+[\w\-.~+/=]+/gi;
/** Long runs of key-like characters (tokens, keys) with at least one digit and one letter. */
const KEY_LIKE = /\b(?=[\w-]*\d)(?=[\w-]*[a-z])[\w-]{32,}\b/gi;
// eslint-disable-next-line no-control-regex -- terminal escapes are stripped, not kept.
const ESCAPES = /\u001b\[[0-9;?]*[a-zA-Z]|[\u0000-\u0008\u000b-\u001f\u007f]/g;

export interface StderrTail {
  /** The kept lines, oldest first, redacted; empty when the server printed nothing. */
  lines(): readonly string[];
  /** Forgets the kept lines and keeps no more (the handshake completed); the stream is still drained. */
  stop(): void;
}

/** Redacts `secrets` (exact values) and secret-looking text from one line. */
export function redactLine(line: string, secrets: readonly string[]): string {
  let text = line.replace(ESCAPES, '');
  for (const secret of secrets) if (secret.length >= 4) text = text.split(secret).join(REDACTED);
  return text
    .replace(SECRET_PAIR, (_, name: string, sep: string) => `${name}${sep}${REDACTED}`)
    .replace(BEARER, (_, scheme: string) => `${scheme} ${REDACTED}`)
    .replace(KEY_LIKE, REDACTED);
}

/** Keeps the last lines `stream` carries until `stop`; `secrets` are the credential values passed in. */
export function stderrTail(stream: Readable | null, secrets: readonly string[]): StderrTail {
  const kept: string[] = [];
  let partial = '';
  let keeping = true;
  const keep = (line: string) => {
    const clean = redactLine(line, secrets).trimEnd();
    if (clean === '') return;
    kept.push(clean.length > MAX_LINE_CHARS ? `${clean.slice(0, MAX_LINE_CHARS - 1)}…` : clean);
    if (kept.length > MAX_LINES) kept.shift();
  };
  stream?.on('data', (chunk: Buffer | string) => {
    if (!keeping) return;
    const text = partial + chunk.toString();
    const lines = text.split(/\r?\n/);
    partial = lines.pop()!;
    // A line that never ends is bounded too.
    if (partial.length > 4 * MAX_LINE_CHARS) partial = partial.slice(0, 4 * MAX_LINE_CHARS);
    for (const line of lines) keep(line);
  });
  // A stderr that errors tells nothing more; it must not crash the gateway.
  stream?.on('error', () => undefined);
  return {
    lines: () =>
      partial !== '' && keeping ? [...kept, redactLine(partial, secrets).slice(0, MAX_LINE_CHARS)] : kept,
    stop() {
      keeping = false;
      partial = '';
      kept.length = 0;
    },
  };
}
