// An upstream server's elicitation during a tool call, relayed through mcpServe + serveHttp: it
// reaches the person at a downstream client that declared elicitation and their answer goes back
// upstream; a downstream client without the capability gets no question, and the upstream reads
// `decline` at once, never a hang.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { canonicalChain } from '@toolgate/middleware';
import {
  mcpClient,
  mcpServe,
  serveHttp,
  type HttpServing,
  type McpClient,
  type McpServed,
} from '@toolgate/mcp';
import { z } from 'zod';
import { elicitingClient, newPerson, plainClient, textOf, type Person } from './fixtures/conformance';
import { CHECK_IN_KEY } from './fixtures/governed';
import { httpUpstream, type HttpUpstream } from './fixtures/http-upstream';

const QUESTION = 'Deploy to which branch?';

/** A third-party server whose `deploy` tool asks its client's person which branch, mid-call. */
function askingServer(answers: ElicitResult[]) {
  return () => {
    const server = new McpServer({ name: 'asking-upstream', version: '1.0.0' });
    server.registerTool(
      'deploy',
      { description: 'Deploys after asking which branch.', inputSchema: { service: z.string() } },
      async ({ service }) => {
        const answer = await server.server.elicitInput({
          mode: 'form',
          message: QUESTION,
          requestedSchema: {
            type: 'object',
            properties: { branch: { type: 'string', title: 'Branch' } },
            required: ['branch'],
          },
        });
        answers.push(answer);
        return {
          content: [
            { type: 'text', text: `${service}: ${answer.action} ${JSON.stringify(answer.content ?? null)}` },
          ],
        };
      },
    );
    return server;
  };
}

describe('elicitation from an upstream server, relayed through mcpServe over Streamable HTTP', () => {
  const answers: ElicitResult[] = [];
  const person: Person = newPerson();
  let upstream: HttpUpstream;
  let imported: McpClient;
  let served: McpServed;
  let http: HttpServing;
  let eliciting: Client;
  let plain: Client;

  beforeAll(async () => {
    upstream = await httpUpstream(askingServer(answers));
    imported = mcpClient({ name: 'ops', url: upstream.url });
    served = mcpServe(await imported.tools(), {
      name: 'gateway',
      version: '1.0.0',
      chain: canonicalChain({ checkInKey: CHECK_IN_KEY }),
      upstreams: [imported],
    });
    http = await serveHttp(served);
    eliciting = elicitingClient(person);
    plain = plainClient();
    await eliciting.connect(new StreamableHTTPClientTransport(http.url));
    await plain.connect(new StreamableHTTPClientTransport(http.url));
  });

  afterAll(async () => {
    await Promise.all([eliciting.close(), plain.close()]);
    await http.close();
    await served.close();
    await imported.close();
    await upstream.close();
  });

  beforeEach(() => {
    answers.length = 0;
    person.asked.length = 0;
  });

  const deploy = (client: Client, service: string) =>
    client.callTool({ name: 'deploy', arguments: { service } }) as Promise<CallToolResult>;

  it("asks the person at an eliciting client the upstream's question, and hands their answer back", async () => {
    person.next = { action: 'accept', content: { branch: 'release-7' } };

    const result = await deploy(eliciting, 'billing');

    expect(person.asked).toHaveLength(1);
    expect(person.asked[0]).toMatchObject({
      message: QUESTION,
      requestedSchema: { properties: { branch: { type: 'string' } }, required: ['branch'] },
    });
    expect(answers).toEqual([{ action: 'accept', content: { branch: 'release-7' } }]);
    expect(result.isError).not.toBe(true);
    expect(textOf(result)).toBe('billing: accept {"branch":"release-7"}');
  });

  it.each<[string, ElicitResult]>([
    ['declines', { action: 'decline' }],
    ['dismisses', { action: 'cancel' }],
  ])('hands the upstream what the person chose when they %s', async (_, answer) => {
    person.next = answer;

    const result = await deploy(eliciting, 'search');

    expect(person.asked).toHaveLength(1);
    expect(answers).toEqual([answer]);
    expect(textOf(result)).toBe(`search: ${answer.action} null`);
  });

  it('declines for a client without elicitation: nobody is asked, the upstream reads decline and the call ends', async () => {
    const result = await deploy(plain, 'search');

    expect(person.asked).toHaveLength(0);
    expect(answers).toEqual([{ action: 'decline' }]);
    expect(textOf(result)).toBe('search: decline null');
  });

  it("asks only the client whose call is running: a plain client's call after an eliciting one's is declined", async () => {
    person.next = { action: 'accept', content: { branch: 'main' } };

    const first = await deploy(eliciting, 'a');
    const second = await deploy(plain, 'b');

    expect(person.asked).toHaveLength(1);
    expect([textOf(first), textOf(second)]).toEqual(['a: accept {"branch":"main"}', 'b: decline null']);
  });

  it('declines, never hangs, when calls in flight at once leave it unclear whose question it is', async () => {
    person.next = { action: 'accept', content: { branch: 'main' } };

    const results = await Promise.all([deploy(eliciting, 'x'), deploy(eliciting, 'y')]);

    expect(results.map((result) => result.isError === true)).toEqual([false, false]);
    expect(answers.map((answer) => answer.action)).toEqual(['decline', 'decline']);
    expect(person.asked).toHaveLength(0);
  });
});
