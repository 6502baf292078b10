import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

/**
 * The SDK's stdio transport, probing the server's revision on the server's own process. The SDK's
 * base class would spawn a disposable second copy of the server just to ask `server/discover`, so
 * every connect started the server twice: a server that takes a lock, binds a port or writes a
 * marker at start then fails its real start. A subclass probes in place; a server that exits on
 * the probe is started once more in the 2025 handshake (the connection's fallback).
 */
export class InPlaceStdioClientTransport extends StdioClientTransport {}
