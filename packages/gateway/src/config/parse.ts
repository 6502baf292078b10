// Step one of loading: the text (YAML or JSON) as a document that remembers where each node was
// written, so every later problem can name its line and column.

import { isAlias, isMap, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import { ConfigError, type ConfigPath } from './errors';

export interface ParsedDocument {
  /** The document as plain values: a mapping of keys. */
  readonly raw: Readonly<Record<string, unknown>>;
  /** Line and column of the node at `path` (of its key with `key`), or of its nearest written ancestor. */
  locate(path: ConfigPath, key?: boolean): { line?: number; column?: number };
}

/** Parses `text`; throws `ConfigError` for a syntax error, runaway aliases or a document that is not a mapping. */
export function parseText(text: string, file: string | undefined): ParsedDocument {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const at = (offset: number | undefined): { line?: number; column?: number } => {
    if (offset === undefined) return {};
    const { line, col } = lineCounter.linePos(offset);
    return { line, column: col };
  };
  const where = file !== undefined ? { file } : {};
  if (doc.errors.length > 0) {
    throw new ConfigError(
      doc.errors.map((error) => ({
        path: [],
        ...where,
        ...at(error.pos[0]),
        message: `not valid YAML or JSON (${error.code.toLowerCase().replace(/_/g, ' ')})`,
        fix: 'correct the syntax at this position',
      })),
    );
  }
  let raw: unknown;
  try {
    raw = doc.toJS({ maxAliasCount: 100 });
  } catch {
    throw new ConfigError([
      {
        path: [],
        ...where,
        ...at(rangeStart(doc.contents)),
        message: 'the document expands too far through aliases',
        fix: 'write the values out',
      },
    ]);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new ConfigError([
      {
        path: [],
        ...where,
        ...at(rangeStart(doc.contents)),
        message: 'the configuration must be a mapping of keys',
        fix: 'start from the example in docs/gateway.md',
      },
    ]);
  return { raw: raw as Record<string, unknown>, locate: (path, key = false) => at(offsetOf(doc, path, key)) };
}

/** Offset of the node at `path` (or of its key), or of the nearest ancestor written in the file. */
function offsetOf(doc: Document, path: ConfigPath, key: boolean): number | undefined {
  let node: unknown = doc.contents;
  let offset = rangeStart(node);
  for (let index = 0; index < path.length; index++) {
    const segment = path[index]!;
    if (isAlias(node)) node = node.resolve(doc);
    if (isMap(node)) {
      const pair = node.items.find((item) => (isScalar(item.key) ? item.key.value : item.key) === segment);
      if (pair === undefined) return offset;
      const last = index === path.length - 1;
      node = last && key ? pair.key : pair.value;
      offset = rangeStart(node) ?? rangeStart(pair.key) ?? offset;
    } else if (isSeq(node) && typeof segment === 'number') {
      node = node.items[segment];
      if (node === undefined) return offset;
      offset = rangeStart(node) ?? offset;
    } else return offset;
  }
  return offset;
}

function rangeStart(node: unknown): number | undefined {
  return (node as Node | null | undefined)?.range?.[0];
}
