// Results made of content blocks, as an MCP server answers a tool call: text, images, audio, links
// and embedded resources. What the model reads of one is its text; what it weighs is the text's
// characters and the decoded bytes of its binary blocks, never base64 length.

/** One block of a content result; blocks keep every field they arrived with. */
export type ContentBlock = Readonly<Record<string, unknown>> & { readonly type: string };

/** A tool result as content blocks (an MCP `CallToolResult` without `isError`). */
export interface ContentResult {
  readonly content: readonly ContentBlock[];
  readonly structuredContent?: Readonly<Record<string, unknown>>;
}

/** What the model reads of a content result, weighed the way the result ceiling weighs it. */
export interface ContentSize {
  /** Characters of text: text blocks and embedded text resources, or the structured content's JSON when longer. */
  readonly chars: number;
  /** Decoded bytes of image, audio and embedded blob blocks. */
  readonly bytes: number;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Whether `value` is shaped like a content result: `content` is a list of typed blocks. */
export function isContentResult(value: unknown): value is ContentResult {
  if (!isRecord(value) || !Array.isArray(value['content'])) return false;
  const structured = value['structuredContent'];
  if (structured !== undefined && !isRecord(structured)) return false;
  return (value['content'] as unknown[]).every(
    (block) => isRecord(block) && typeof block['type'] === 'string',
  );
}

/** Bytes that base64 text decodes to, without decoding it. */
export function base64Bytes(data: unknown): number {
  if (typeof data !== 'string') return 0;
  let length = data.length;
  while (length > 0 && /\s/.test(data[length - 1]!)) length -= 1;
  const padding = data[length - 1] === '=' ? (data[length - 2] === '=' ? 2 : 1) : 0;
  return Math.max(0, Math.floor((length * 3) / 4) - padding);
}

function blockText(block: ContentBlock): string | undefined {
  if (block.type === 'text') return typeof block['text'] === 'string' ? block['text'] : '';
  if (block.type === 'resource' && isRecord(block['resource'])) {
    const text = block['resource']['text'];
    if (typeof text === 'string') return text;
  }
  return undefined;
}

function blockBytes(block: ContentBlock): number {
  if (block.type === 'image' || block.type === 'audio') return base64Bytes(block['data']);
  if (block.type === 'resource' && isRecord(block['resource'])) return base64Bytes(block['resource']['blob']);
  return 0;
}

/** Characters and bytes of a content result, as the result ceiling counts them. */
export function contentSize(result: ContentResult): ContentSize {
  let chars = 0;
  let bytes = 0;
  for (const block of result.content) {
    chars += blockText(block)?.length ?? 0;
    bytes += blockBytes(block);
  }
  // A client may hand the model either form, so the longer one counts.
  if (result.structuredContent !== undefined)
    chars = Math.max(chars, JSON.stringify(result.structuredContent).length);
  return { chars, bytes };
}

function describeBlock(block: ContentBlock): string {
  const mime = typeof block['mimeType'] === 'string' ? `${block['mimeType']}, ` : '';
  if (block.type === 'image' || block.type === 'audio')
    return `[${block.type}: ${mime}${blockBytes(block)} bytes]`;
  if (block.type === 'resource_link') return `[resource link: ${String(block['uri'])}]`;
  if (block.type === 'resource' && isRecord(block['resource'])) {
    const { uri, mimeType } = block['resource'];
    return `[resource: ${String(uri)}${typeof mimeType === 'string' ? `, ${mimeType}` : ''}, ${blockBytes(block)} bytes]`;
  }
  return `[${block.type}]`;
}

/**
 * The text a model reads from a content result where blocks cannot travel as blocks: text as it is,
 * binary blocks and links named in brackets; the structured content's JSON when there are no blocks.
 */
export function contentText(result: ContentResult): string {
  if (result.content.length === 0)
    return result.structuredContent === undefined ? '' : JSON.stringify(result.structuredContent);
  return result.content.map((block) => blockText(block) ?? describeBlock(block)).join('\n');
}
