// Reading an argument as the place a tool will connect to: the WHATWG URL parser decides the host
// (so `http://2130706433/`, `http://0x7f.1/`, `http://[::ffff:127.0.0.1]/` and percent-encoded or
// IDN hosts read as the address a fetch would reach), and anything it cannot read is refused.

/** How an argument names its destination. */
export type DestinationKind = 'url' | 'reference' | 'host';

export type Destination =
  | { readonly ok: true; readonly host: string }
  /** A relative URL reference: it names no host of its own. */
  | { readonly ok: true; readonly host: undefined }
  | { readonly ok: false; readonly problem: 'not-a-url' | 'not-a-host' | 'scheme' | 'credentials' };

const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;
// `localhost:8080/x` or `10.0.0.1:80`: a host and port the WHATWG parser would read as a scheme.
const HOST_AND_PORT = /^[^:/?#\s]+:\d{1,5}(?:[/?#]|$)/;
const NOT_IN_A_HOST = /[/\\@?#\s]/;

function parse(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

/** `schemes` undefined: the guard wrote the scheme itself, so there is none to judge. */
function fromUrl(
  url: URL | undefined,
  schemes: ReadonlySet<string> | undefined,
  problem: 'not-a-url' | 'not-a-host',
): Destination {
  if (url === undefined) return { ok: false, problem };
  if (schemes !== undefined && !schemes.has(url.protocol.slice(0, -1)))
    return { ok: false, problem: 'scheme' };
  if (url.username !== '' || url.password !== '') return { ok: false, problem: 'credentials' };
  if (url.hostname === '') return { ok: false, problem };
  return { ok: true, host: url.hostname };
}

/** A bare host (`example.com`, `127.1`, `::1`, `host:8080`) read as `http://host/` would be. */
function fromHost(text: string): Destination {
  if (text === '' || NOT_IN_A_HOST.test(text)) return { ok: false, problem: 'not-a-host' };
  const bareIpv6 = !text.startsWith('[') && text.indexOf(':') !== text.lastIndexOf(':');
  const url = parse(`http://${bareIpv6 ? `[${text}]` : text}/`);
  return fromUrl(url, undefined, 'not-a-host');
}

/**
 * The host `value` points to. `url`: an absolute URL, or a host with no scheme (`example.com/x`),
 * read as a tool that prepends `http://` would; `reference`: as `url`, but a relative reference
 * (`/docs`, `page.html`) names no host; `host`: a bare host name or address.
 */
export function destinationOf(
  value: string,
  kind: DestinationKind,
  schemes: ReadonlySet<string>,
): Destination {
  const text = value.trim();
  if (kind === 'host') return fromHost(text);
  if (text.startsWith('//') || text.startsWith('\\\\'))
    return fromUrl(parse(`http:${text}`), undefined, 'not-a-url');
  if (SCHEME.test(text) && !HOST_AND_PORT.test(text)) return fromUrl(parse(text), schemes, 'not-a-url');
  if (kind === 'reference') return { ok: true, host: undefined };
  // No scheme: the host is whatever comes before the first '/', '?' or '#'.
  return fromUrl(parse(`http://${text}`), undefined, 'not-a-url');
}
