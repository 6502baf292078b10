// A stdio upstream gets the messages of one event-loop turn in one write: concurrent calls cost one
// pipe write (and one wake-up of the server) per turn, not one per message, in order, none held back.

import type { Writable } from 'node:stream';
import { InPlaceStdioClientTransport } from '@toolgate/mcp';

// Echoes each line it reads back as a JSON-RPC response carrying the line's id and params.
const ECHO = `
const { createInterface } = require('node:readline');
createInterface({ input: process.stdin }).on('line', (line) => {
  const message = JSON.parse(line);
  process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: message.params }) + '\\n');
});
`;

type Message = { jsonrpc: '2.0'; id: number; result?: { n: number; pad?: string } };

async function started() {
  const transport = new InPlaceStdioClientTransport({ command: process.execPath, args: ['-e', ECHO] });
  const received: Message[] = [];
  const waiting: (() => void)[] = [];
  transport.onmessage = (message) => {
    received.push(message as Message);
    waiting.splice(0).forEach((wake) => wake());
  };
  await transport.start();
  const until = async (count: number) => {
    for (let i = 0; i < 200 && received.length < count; i++)
      await new Promise<void>((wake) => {
        waiting.push(wake);
        setTimeout(wake, 50);
      });
    return received;
  };
  // The SDK keeps its child private: the test reads the same field the transport does.
  const stdin = (transport as unknown as { _process: { stdin: Writable } })._process.stdin;
  return { transport, until, stdin };
}

const request = (n: number, pad?: string) => ({
  jsonrpc: '2.0' as const,
  id: n,
  method: 'echo',
  params: pad === undefined ? { n } : { n, pad },
});

describe('InPlaceStdioClientTransport writes', () => {
  it('sends the messages of one turn in one write, in order', async () => {
    const { transport, until, stdin } = await started();
    try {
      const single = jest.spyOn(stdin as unknown as { _write: () => void }, '_write');
      const many = jest.spyOn(stdin as unknown as { _writev: () => void }, '_writev');
      await Promise.all(Array.from({ length: 10 }, (_, n) => transport.send(request(n))));
      const received = await until(10);
      expect(received.map((message) => message.id)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      expect(single).not.toHaveBeenCalled();
      expect(many).toHaveBeenCalledTimes(1);
      expect((many.mock.calls[0] as unknown as [unknown[]])[0]).toHaveLength(10);
    } finally {
      await transport.close();
    }
  });

  it('holds nothing past its turn: each later message goes out on its own, in order', async () => {
    const { transport, until } = await started();
    try {
      await transport.send(request(1));
      expect((await until(1)).map((message) => message.id)).toEqual([1]);
      void transport.send(request(2));
      void transport.send(request(3));
      await new Promise((resolve) => setTimeout(resolve, 5));
      await transport.send(request(4));
      expect((await until(4)).map((message) => message.id)).toEqual([1, 2, 3, 4]);
    } finally {
      await transport.close();
    }
  });

  it('delivers a message larger than the pipe buffer whole, sent beside small ones', async () => {
    const { transport, until } = await started();
    try {
      const pad = 'x'.repeat(300_000);
      await Promise.all([
        transport.send(request(1)),
        transport.send(request(2, pad)),
        transport.send(request(3)),
      ]);
      const received = await until(3);
      expect(received.map((message) => message.id)).toEqual([1, 2, 3]);
      expect(received[1]!.result!.pad).toBe(pad);
    } finally {
      await transport.close();
    }
  });
});
