import { BlockList, isIP } from 'node:net';

// Host names as the server's network guards compare them: the bind address of protected mode
// (config/areas/network.ts) and the Host / Origin check against DNS rebinding (http/host-check.ts).
// One canonical form for both: what the WHATWG URL parser makes of a host (lowercase, punycode,
// IPv4 in dotted decimal, IPv6 compressed), without brackets or a trailing dot.

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

/**
 * `host` (a host name or IP literal, IPv6 with or without brackets, no port) in canonical form,
 * or null when it is not a valid host.
 */
export function canonicalHostname(host: string): string | null {
  const bare = host.trim().replace(/^\[(.*)\]$/, '$1');
  if (bare === '' || /[/\\?#@\s]/.test(bare)) return null;
  // A port is not part of a host (and `:80` would vanish as http's default).
  if (bare.includes(':') && isIP(bare) !== 6) return null;
  try {
    const url = new URL(`http://${isIP(bare) === 6 ? `[${bare}]` : bare}`);
    if (url.port !== '') return null;
    return url.hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
  } catch {
    return null;
  }
}

/**
 * A `Host` header (`name`, `name:port`, `[v6]:port`) split into its canonical host name and
 * its port ('' when none); null when it is not one.
 */
export function parseHostHeader(value: string): { hostname: string; port: string } | null {
  if (value === '' || /[/\\?#@\s]/.test(value)) return null;
  try {
    const url = new URL(`http://${value}`);
    return {
      hostname: url.hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, ''),
      port: url.port,
    };
  } catch {
    return null;
  }
}

/**
 * Whether a canonical host name can only mean this machine: `localhost` and its subdomains
 * (RFC 6761; browsers resolve them to loopback themselves, never through DNS), 127.0.0.0/8 and
 * ::1 (also IPv4-mapped).
 */
export function isLoopbackHostname(hostname: string): boolean {
  if (hostname === 'localhost' || hostname.endsWith('.localhost')) return true;
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(hostname);
  if (mapped?.[1] !== undefined) return parseInt(mapped[1], 16) >> 8 === 127;
  const family = isIP(hostname);
  if (family === 0) return false;
  return loopback.check(hostname, family === 4 ? 'ipv4' : 'ipv6');
}

/** Whether `hostname` (canonical) is an IP literal rather than a name. */
export function isIpLiteral(hostname: string): boolean {
  return isIP(hostname) !== 0;
}

/**
 * One entry of `COGNITION_ALLOWED_HOSTS`: `*` (any host), `.example.com` (example.com and every
 * subdomain), or a host name or IP address (any port). Null when the entry is none of these.
 */
export type AllowedHost = { kind: 'any' } | { kind: 'domain' | 'exact'; hostname: string };

export function parseAllowedHost(entry: string): AllowedHost | null {
  if (entry === '*') return { kind: 'any' };
  const domain = entry.startsWith('.');
  const hostname = canonicalHostname(domain ? entry.slice(1) : entry);
  if (hostname === null || (domain && isIP(hostname) !== 0)) return null;
  return { kind: domain ? 'domain' : 'exact', hostname };
}

/** The printable form of a parsed entry (what the config keeps). */
export function formatAllowedHost(host: AllowedHost): string {
  if (host.kind === 'any') return '*';
  return host.kind === 'domain' ? `.${host.hostname}` : host.hostname;
}

/** Whether `hostname` (canonical) matches one of `allowed` (entries as `formatAllowedHost` writes them). */
export function matchesAllowedHost(hostname: string, allowed: readonly string[]): boolean {
  return allowed.some((entry) => {
    if (entry === '*') return true;
    if (entry.startsWith('.')) {
      const domain = entry.slice(1);
      return hostname === domain || hostname.endsWith(entry);
    }
    return hostname === entry;
  });
}
