// Which hosts are not the public internet: IPv4 and IPv6 special-purpose ranges (IANA registries),
// IPv6 forms that embed an IPv4 address (mapped, compatible, translated, NAT64, 6to4), and names
// that only resolve inside a network. Hosts arrive as the WHATWG URL parser serializes them, so
// every IPv4 spelling (decimal, octal, hex, short) is already a dotted quad here.

/** Why a host is not public: the refusal names the kind, never the host. */
export type PrivateKind = 'loopback' | 'link-local' | 'private' | 'unspecified' | 'reserved' | 'local-name';

const DOTTED_QUAD = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/** A dotted quad as a 32-bit number, or undefined. */
export function ipv4Number(text: string): number | undefined {
  const match = DOTTED_QUAD.exec(text);
  if (match === null) return undefined;
  let value = 0;
  for (let i = 1; i <= 4; i++) {
    const octet = Number(match[i]);
    if (octet > 255) return undefined;
    value = value * 256 + octet;
  }
  return value;
}

const cidr4 = (base: string, bits: number, kind: PrivateKind) => {
  const start = ipv4Number(base)!;
  const size = 2 ** (32 - bits);
  return { start, end: start + size - 1, kind };
};

// IANA IPv4 Special-Purpose Address Registry, plus multicast and the reserved block.
const V4_RANGES = [
  cidr4('0.0.0.0', 8, 'unspecified'),
  cidr4('10.0.0.0', 8, 'private'),
  cidr4('100.64.0.0', 10, 'private'),
  cidr4('127.0.0.0', 8, 'loopback'),
  cidr4('169.254.0.0', 16, 'link-local'),
  cidr4('172.16.0.0', 12, 'private'),
  cidr4('192.0.0.0', 24, 'reserved'),
  cidr4('192.0.2.0', 24, 'reserved'),
  cidr4('192.88.99.0', 24, 'reserved'),
  cidr4('192.168.0.0', 16, 'private'),
  cidr4('198.18.0.0', 15, 'reserved'),
  cidr4('198.51.100.0', 24, 'reserved'),
  cidr4('203.0.113.0', 24, 'reserved'),
  cidr4('224.0.0.0', 4, 'reserved'),
  cidr4('240.0.0.0', 4, 'reserved'),
];

function classifyV4(value: number): PrivateKind | undefined {
  for (const range of V4_RANGES) if (value >= range.start && value <= range.end) return range.kind;
  return undefined;
}

/** Eight 16-bit groups of an IPv6 address (brackets optional, an IPv4 tail allowed), or undefined. */
export function ipv6Groups(text: string): number[] | undefined {
  let body = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  if (body.includes('%') || !/^[0-9a-fA-F:.]{2,45}$/.test(body)) return undefined;
  if (body.includes('.')) {
    // An IPv4 tail (::ffff:127.0.0.1) is two groups written another way.
    const lastColon = body.lastIndexOf(':');
    const v4 = ipv4Number(body.slice(lastColon + 1));
    if (v4 === undefined) return undefined;
    const hex = (n: number) => n.toString(16);
    body = `${body.slice(0, lastColon + 1)}${hex(Math.floor(v4 / 65536))}:${hex(v4 % 65536)}`;
  }
  const halves = body.split('::');
  if (halves.length > 2) return undefined;
  const parse = (part: string): number[] | undefined => {
    if (part === '') return [];
    const groups = part.split(':');
    if (groups.some((g) => !/^[0-9a-fA-F]{1,4}$/.test(g))) return undefined;
    return groups.map((g) => parseInt(g, 16));
  };
  const head = parse(halves[0]!);
  const rest = halves.length === 2 ? parse(halves[1]!) : [];
  if (head === undefined || rest === undefined) return undefined;
  const explicit = head.length + rest.length;
  if (halves.length === 1 ? explicit !== 8 : explicit > 7) return undefined;
  const zeros = new Array<number>(8 - explicit).fill(0);
  return [...head, ...zeros, ...rest];
}

const embeddedV4 = (high: number, low: number) => high * 65536 + low;

function classifyV6(g: readonly number[]): PrivateKind | undefined {
  const [a, b, c, d, e, f, h, i] = g as [number, number, number, number, number, number, number, number];
  const firstFiveZero = a === 0 && b === 0 && c === 0 && d === 0 && e === 0;
  if (firstFiveZero && f === 0) {
    if (h === 0 && i === 0) return 'unspecified';
    if (h === 0 && i === 1) return 'loopback';
    // ::a.b.c.d, IPv4-compatible: deprecated, never a public destination.
    return classifyV4(embeddedV4(h, i)) ?? 'reserved';
  }
  // ::ffff:a.b.c.d (mapped) and ::ffff:0:a.b.c.d (translated) reach the IPv4 address they embed.
  if (firstFiveZero && f === 0xffff) return classifyV4(embeddedV4(h, i));
  if (a === 0 && b === 0 && c === 0 && d === 0 && e === 0xffff && f === 0)
    return classifyV4(embeddedV4(h, i));
  // 64:ff9b::/96 NAT64 reaches its embedded address; 64:ff9b:1::/48 is for local use.
  if (a === 0x64 && b === 0xff9b) {
    if (c === 0 && d === 0 && e === 0 && f === 0) return classifyV4(embeddedV4(h, i));
    return 'private';
  }
  // 2002::/16 6to4 embeds the IPv4 address of its relay in bits 16-47.
  if (a === 0x2002) return classifyV4(embeddedV4(b, c));
  if (a === 0x0100 && b === 0 && c === 0 && d === 0) return 'reserved';
  // 2001::/32 Teredo hides its client's address; 2001:db8::/32 is documentation; 2001:0-1ff::/23 is IETF's.
  if (a === 0x2001 && (b < 0x0200 || b === 0x0db8)) return 'reserved';
  if ((a & 0xfe00) === 0xfc00) return 'private';
  if ((a & 0xffc0) === 0xfe80) return 'link-local';
  if ((a & 0xffc0) === 0xfec0) return 'private';
  if ((a & 0xff00) === 0xff00) return 'reserved';
  // Only 2000::/3 is allocated as global unicast.
  if ((a & 0xe000) !== 0x2000) return 'reserved';
  return undefined;
}

// Names that resolve only inside a network (RFC 6761, RFC 6762, RFC 8375, ICANN's .internal, and
// common private suffixes); a single-label name resolves through the resolver's search list.
const LOCAL_SUFFIXES = [
  'localhost',
  'local',
  'internal',
  'home.arpa',
  'localdomain',
  'lan',
  'intranet',
  'corp',
];

function classifyName(name: string): PrivateKind | undefined {
  const host = name.replace(/\.+$/, '');
  if (host === '' || !host.includes('.')) return 'local-name';
  for (const suffix of LOCAL_SUFFIXES)
    if (host === suffix || host.endsWith(`.${suffix}`)) return 'local-name';
  return undefined;
}

/** Whether `text` is an IP address literal (dotted quad, or IPv6 with or without brackets). */
export function isIpLiteral(text: string): boolean {
  return ipv4Number(text) !== undefined || (text.includes(':') && ipv6Groups(text) !== undefined);
}

/**
 * Why `host` (a WHATWG-serialized hostname, or an address a resolver returned) is not a public
 * destination, or undefined when it is. An address that does not parse is 'reserved': fail closed.
 */
export function privateKind(host: string): PrivateKind | undefined {
  const v4 = ipv4Number(host);
  if (v4 !== undefined) return classifyV4(v4);
  if (host.includes(':')) {
    const groups = ipv6Groups(host);
    return groups === undefined ? 'reserved' : classifyV6(groups);
  }
  if (/^[\d.]+$/.test(host)) return 'reserved';
  return classifyName(host);
}
