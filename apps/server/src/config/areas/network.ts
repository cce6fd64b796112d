import type { AreaBuilder, SettingsReader } from '../settings';
import { need } from '../settings';
import {
  canonicalHostname,
  formatAllowedHost,
  isLoopbackHostname,
  parseAllowedHost,
} from './hosts';
import type { ServerConfig } from '../types';
import { list } from '../values';

// Who can reach the server, and what it lets them reach it as. Protected mode: a server with no
// API keys listens on loopback only, and the local sandbox (no isolation at all) never meets the
// network, unless the operator opts in by name. The Host / Origin check (http/host-check.ts)
// reads the allowed hosts. Both refusals are settings problems, so they stop the start before
// any file, database or port is opened, listed with every other problem.

/** Whether `COGNITION_HOST` can only be reached from this machine. */
export function isLoopbackBind(host: string): boolean {
  const hostname = canonicalHostname(host);
  return hostname !== null && isLoopbackHostname(hostname);
}

export function readNetwork(settings: SettingsReader): AreaBuilder<Pick<ServerConfig, 'network'>> {
  const host = settings.read('COGNITION_HOST');
  const allowUnauthenticated = settings.read('COGNITION_ALLOW_UNAUTHENTICATED_NETWORK');
  const allowLocalSandbox = settings.read('COGNITION_ALLOW_LOCAL_SANDBOX_ON_NETWORK');
  const backend = settings.read('COGNITION_SANDBOX_BACKEND');
  // Any key entry counts: a malformed one is reported by the auth area, and a server whose
  // operator meant to set keys is not refused for being open as well.
  const keyEntries =
    list(settings.read('COGNITION_API_KEYS') ?? '').length +
    list(settings.read('COGNITION_ADMIN_API_KEYS') ?? '').length;

  const allowedHosts: string[] = [];
  for (const entry of list(settings.read('COGNITION_ALLOWED_HOSTS') ?? '')) {
    const parsed = parseAllowedHost(entry);
    if (parsed === null) {
      settings.invalid(
        'COGNITION_ALLOWED_HOSTS',
        `COGNITION_ALLOWED_HOSTS: "${entry.slice(0, 80)}" is not a host (a name or IP address without scheme, port or path; .example.com for a domain and its subdomains; * for any host)`,
      );
    } else {
      allowedHosts.push(formatAllowedHost(parsed));
    }
  }

  const exposed = host !== undefined && !isLoopbackBind(host);
  const unauthenticatedNetwork = exposed && keyEntries === 0;
  if (unauthenticatedNetwork && allowUnauthenticated === false) {
    settings.check(
      `COGNITION_HOST: refused to listen on ${host} with no API keys configured. ` +
        'It is not a loopback address, so anyone who can reach the port could run agents, change ' +
        "the registry's agents and providers, and run commands through the sandbox. " +
        'Set COGNITION_API_KEYS (see docs/security.md), listen on 127.0.0.1, or set ' +
        'COGNITION_ALLOW_UNAUTHENTICATED_NETWORK=true to serve the network without authentication anyway.',
    );
  }
  const localSandboxOnNetwork = exposed && backend === 'local';
  if (localSandboxOnNetwork && allowLocalSandbox === false) {
    settings.check(
      `COGNITION_SANDBOX_BACKEND: refused the local sandbox with COGNITION_HOST=${host}. ` +
        "The local sandbox runs the agent's commands on this machine as the server's user, with " +
        'no isolation, and a non-loopback address puts it on the network. ' +
        'Use COGNITION_SANDBOX_BACKEND=docker, listen on 127.0.0.1, or set ' +
        'COGNITION_ALLOW_LOCAL_SANDBOX_ON_NETWORK=true to allow it anyway.',
    );
  }
  return () => ({
    network: {
      allowedHosts,
      exposed,
      unauthenticatedNetwork: unauthenticatedNetwork && need(allowUnauthenticated),
      localSandboxOnNetwork: localSandboxOnNetwork && need(allowLocalSandbox),
    },
  });
}

/**
 * The warnings a start with an opt-in in effect logs, every time (so the choice stays visible
 * in every log the server writes).
 */
export function networkWarnings(
  config: Pick<ServerConfig, 'network' | 'host' | 'apiKeys' | 'corsOrigins'>,
): {
  setting: string;
  message: string;
}[] {
  const warnings: { setting: string; message: string }[] = [];
  const { network } = config;
  if (network.unauthenticatedNetwork) {
    warnings.push({
      setting: 'COGNITION_ALLOW_UNAUTHENTICATED_NETWORK',
      message:
        `Listening on ${config.host} with no API keys (COGNITION_ALLOW_UNAUTHENTICATED_NETWORK=true): ` +
        'anyone who can reach the port can run agents, change agents and providers, and run commands ' +
        'through the sandbox. Set COGNITION_API_KEYS unless the network itself is trusted.',
    });
  }
  if (network.localSandboxOnNetwork) {
    warnings.push({
      setting: 'COGNITION_ALLOW_LOCAL_SANDBOX_ON_NETWORK',
      message:
        `The local sandbox serves a server listening on ${config.host} ` +
        "(COGNITION_ALLOW_LOCAL_SANDBOX_ON_NETWORK=true): agents' commands run on this machine as " +
        "the server's user, with no isolation. Prefer COGNITION_SANDBOX_BACKEND=docker.",
    });
  }
  if (config.apiKeys.length === 0 && network.allowedHosts.includes('*')) {
    warnings.push({
      setting: 'COGNITION_ALLOWED_HOSTS',
      message:
        'COGNITION_ALLOWED_HOSTS=* with no API keys: the Host and Origin check is off, so a web page ' +
        "can reach this server through DNS rebinding from any visitor's browser on this machine.",
    });
  }
  if (config.apiKeys.length === 0 && config.corsOrigins.includes('*')) {
    warnings.push({
      setting: 'COGNITION_CORS_ORIGINS',
      message:
        'COGNITION_CORS_ORIGINS=* with no API keys: any web page a visitor of this machine opens can ' +
        'call this server, create sessions and run agents. List the origins that need it instead.',
    });
  }
  return warnings;
}
