// `toolgate policy test CASES.yaml --config F`: reads the cases file (placing each case at its line),
// decides them with testGatewayPolicy and prints which decided as expected. Exit 0 when every case
// passes, 1 otherwise.

import { readFileSync } from 'node:fs';
import type { Identity } from '@toolgate/core';
import type { PolicyTestCase } from '@toolgate/policy';
import { isSeq, LineCounter, parseDocument, type Node } from 'yaml';
import type { LoadedConfig } from '../config/load';
import { testGatewayPolicy } from '../policy-cases';
import type { CommandIo } from './io';

interface PlacedCase {
  readonly index: number;
  readonly testCase: PolicyTestCase;
  readonly line: number;
  readonly column: number;
}

export async function policyTestCommand(
  casesFile: string,
  loaded: LoadedConfig,
  io: CommandIo,
): Promise<number> {
  const cases = readCases(casesFile, io);
  if (cases === undefined) return 1;
  const results = await testGatewayPolicy(
    loaded,
    cases.map((placed) => placed.testCase),
    { env: io.env },
  );
  let failed = 0;
  for (const [position, placed] of cases.entries()) {
    const result = results[position]!;
    const label = result.name ?? `case ${placed.index + 1}`;
    if (result.passed) {
      io.out(
        `ok    ${label}: ${result.actual} by ${result.rule === undefined ? 'the default' : `rule '${result.rule}'`}`,
      );
    } else {
      failed += 1;
      io.out(`FAIL  ${casesFile}:${placed.line}:${placed.column}: ${label}: ${result.problem ?? 'failed'}`);
    }
  }
  io.out(`${cases.length - failed} passed, ${failed} failed`);
  return failed === 0 ? 0 : 1;
}

/** The cases file: a YAML or JSON list of `{ name?, identity?, tool, args?, expect, rule?, now? }`. */
function readCases(file: string, io: CommandIo): PlacedCase[] | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    io.err(
      `${file}: the cases file cannot be read (${code === 'ENOENT' ? 'it does not exist' : (code ?? 'error')}).`,
    );
    return undefined;
  }
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const at = (node: Node | null | undefined) => lines.linePos(node?.range?.[0] ?? 0);
  const problem = (node: Node | null | undefined, message: string) => {
    const { line, col } = at(node);
    io.err(`${file}:${line}:${col}: ${message}`);
    return undefined;
  };
  const first = doc.errors[0];
  if (first !== undefined) {
    const { line, col } = lines.linePos(first.pos[0]);
    io.err(
      `${file}:${line}:${col}: not valid YAML or JSON (${first.code.toLowerCase().replace(/_/g, ' ')}).`,
    );
    return undefined;
  }
  const root = doc.contents as Node | null;
  if (!isSeq(root) || root.items.length === 0)
    return problem(
      root,
      'a cases file is a non-empty list of { identity, tool, args, expect: allow|deny|ask }.',
    );
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch {
    return problem(root, 'the document expands too far through aliases.');
  }
  const placed: PlacedCase[] = [];
  for (const [index, item] of (value as unknown[]).entries()) {
    const node = root.items[index] as Node | undefined;
    if (typeof item !== 'object' || item === null || Array.isArray(item))
      return problem(node, `case ${index + 1} must be a mapping { identity, tool, args, expect }.`);
    const identity = (item as { identity?: unknown }).identity;
    if (identity !== undefined && !isIdentity(identity))
      return problem(node, `case ${index + 1}: identity must be { tenant?, principal?, roles?: [...] }.`);
    const { line, col } = at(node);
    placed.push({ index, testCase: item as PolicyTestCase, line, column: col });
  }
  return placed;
}

function isIdentity(value: unknown): value is Identity {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const { tenant, principal, roles } = value as Record<string, unknown>;
  return (
    (tenant === undefined || typeof tenant === 'string') &&
    (principal === undefined || typeof principal === 'string') &&
    (roles === undefined || (Array.isArray(roles) && roles.every((role) => typeof role === 'string')))
  );
}
