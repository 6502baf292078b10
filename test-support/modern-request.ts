// One 2026-07-28 request as a tasks-capable client sends it, over plain fetch: the SDK v2 client
// (2.4) rejects `resultType: "task"`, so the task tests speak the wire themselves.

export const MODERN = '2026-07-28';
export const WITH_TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };

export type ModernAnswer = {
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
};

let nextId = 1;

export async function modernRequest(
  at: string | URL,
  token: string,
  method: string,
  params: Record<string, unknown>,
  capabilities: Record<string, unknown> = WITH_TASKS,
): Promise<ModernAnswer> {
  const name = (params['name'] ?? params['taskId']) as string | undefined;
  const response = await fetch(at, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN,
      'mcp-method': method,
      ...(name !== undefined ? { 'mcp-name': name } : {}),
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: nextId++,
      method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': MODERN,
          'io.modelcontextprotocol/clientInfo': { name: 'raw-tasks', version: '1.0.0' },
          'io.modelcontextprotocol/clientCapabilities': capabilities,
        },
      },
    }),
  });
  const text = await response.text();
  const data = text.startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? '{}');
  return JSON.parse(data) as ModernAnswer;
}
