// The toolkit the vector table and the property test play against: our own tools (fetch, post, send,
// read, run, config, a CRM call that needs a credential) and MCP servers' tools (web, bank, files,
// fetcher, git: imported, declaring nothing), in
// the three configurations of guard-vectors.ts.

import {
  contentText,
  createDispatcher,
  defineTool,
  isContentResult,
  type CredentialProvider,
  type Dispatcher,
  type DispatchOutcome,
  type PermissionChecker,
  type Tool,
} from '@toolgate/core';
import { canonicalChain, type CanonicalGuards } from '@toolgate/middleware';
import { CONFIGS, CRM_SECRET, FILES, PAGES, type Configuration, type Step } from './guard-vectors';

const str = { type: 'string' } as const;

interface ToolSpec {
  readonly name: string;
  readonly properties: Record<string, unknown>;
  readonly closed?: boolean;
  readonly source?: string;
  readonly respond: (args: Record<string, unknown>) => unknown;
  /** Declarations the configured toolkit adds. */
  readonly declares?: Partial<Pick<Tool, 'egress' | 'paths' | 'capabilities'>>;
  readonly needs?: Tool['needs'];
}

const SPECS: readonly ToolSpec[] = [
  {
    name: 'fetch_url',
    properties: { url: { type: 'string', format: 'uri' } },
    respond: () => 'page text',
    declares: { egress: ['url'] },
  },
  {
    name: 'http_post',
    properties: { url: str, body: str },
    closed: true,
    respond: () => ({ status: 202 }),
    declares: { egress: ['url'] },
  },
  { name: 'send_message', properties: { to: str, text: str }, respond: () => 'sent' },
  {
    name: 'read_file',
    properties: { path: str },
    respond: () => 'a,b\n1,2',
    declares: { paths: { path: ['/srv/data'] } },
  },
  {
    name: 'run_command',
    properties: { command: str },
    respond: () => 'clean',
    declares: { capabilities: ['shell'] },
  },
  {
    name: 'get_config',
    properties: { which: str },
    // A JSON config comes back as data, the others as text.
    respond: (args) => {
      const config = CONFIGS[String(args['which'])] ?? '';
      return config.startsWith('{') ? (JSON.parse(config) as unknown) : config;
    },
  },
  {
    name: 'call_crm',
    properties: { query: str },
    respond: () => ({ accounts: 3 }),
    needs: { kind: 'api_key', service: 'crm' },
  },
  {
    name: 'web_fetch',
    properties: { page: str },
    source: 'web',
    respond: (args) => PAGES[String(args['page'])] ?? '',
  },
  // An MCP filesystem, fetch and git server's tools: imported, so they declare nothing.
  {
    name: 'mcp_read',
    properties: { file: str },
    source: 'files',
    respond: (args) => ({ content: [{ type: 'text', text: FILES[String(args['file'])] ?? 'a,b\n1,2' }] }),
  },
  { name: 'mcp_fetch', properties: { target: str }, source: 'fetcher', respond: () => 'page text' },
  { name: 'mcp_git', properties: { args: str }, source: 'git', respond: () => 'On branch main' },
  {
    name: 'bank_transfer',
    properties: { to: str, amount: { type: 'number' } },
    source: 'bank',
    respond: () => ({ status: 'sent' }),
  },
];

const credentials: CredentialProvider = { resolve: async () => ({ kind: 'api_key', value: CRM_SECRET }) };

/** Resolves names as a DNS server would for this table: one rebinding name, everything else public. */
const resolve = async (hostname: string) =>
  hostname === 'rebind.attacker.example' ? ['127.0.0.1'] : ['93.184.215.14'];

export const CONFIGURED_GUARDS: CanonicalGuards = {
  egress: { resolve, tenants: { acme: { allowHosts: ['*.wikipedia.org', 'api.acme.example'] } } },
  secrets: {},
  crossServer: {},
  results: { mode: 'withhold' },
};

export interface Toolkit {
  readonly dispatcher: Dispatcher;
  /** How many times each tool ran. */
  readonly runs: Map<string, number>;
  /** What each tool returned last, as the model would read it unguarded. */
  readonly returned: Map<string, string>;
}

export function toolkit(configuration: Configuration, permissions?: PermissionChecker): Toolkit {
  const runs = new Map<string, number>();
  const returned = new Map<string, string>();
  const tools = SPECS.map((spec) => {
    const tool = defineTool({
      name: spec.name,
      description: `${spec.name} of the vector toolkit`,
      inputSchema: {
        type: 'object',
        properties: spec.properties,
        ...(spec.closed === true ? { additionalProperties: false } : {}),
      },
      ...(configuration === 'configured' ? spec.declares : {}),
      ...(spec.needs !== undefined ? { needs: spec.needs } : {}),
      execute: async (args: Record<string, unknown>) => {
        runs.set(spec.name, (runs.get(spec.name) ?? 0) + 1);
        const value = spec.respond(args);
        // What the model reads unguarded: an MCP result's blocks as their text.
        returned.set(
          spec.name,
          typeof value === 'string'
            ? value
            : spec.source !== undefined && isContentResult(value)
              ? contentText(value)
              : JSON.stringify(value),
        );
        return value;
      },
    } as never) as Tool;
    return spec.source === undefined ? tool : { ...tool, source: spec.source };
  });
  const guards =
    configuration === 'none' ? {} : { guards: configuration === 'configured' ? CONFIGURED_GUARDS : {} };
  const chain = canonicalChain({
    credentials,
    ...guards,
    ...(permissions !== undefined ? { permissions } : {}),
  });
  return { dispatcher: createDispatcher({ tools, chain }), runs, returned };
}

/** Plays `steps` in one conversation and returns the last outcome. */
export async function play(kit: Toolkit, steps: readonly Step[]): Promise<DispatchOutcome> {
  let last: DispatchOutcome | undefined;
  for (const step of steps)
    last = await kit.dispatcher.dispatch(
      { toolName: step.tool, args: step.args },
      { identity: { tenant: step.tenant ?? 'globex', principal: 'ana', conversation: 'c1' } },
    );
  return last!;
}

/** Stopped: the call did not run or was withheld, the result was changed (redacted), or it was flagged. */
export function stopped(kit: Toolkit, step: Step, outcome: DispatchOutcome): boolean {
  if (outcome.kind !== 'result') return true;
  if (outcome.content !== kit.returned.get(step.tool)) return true;
  return outcome.ledger.some(
    (row) => row.gate === 'result-screen' && row.why?.startsWith('flagged') === true,
  );
}
