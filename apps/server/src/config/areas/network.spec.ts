import { ConfigError, loadConfig, networkWarnings } from '..';
import type { Env } from '..';
import {
  canonicalHostname,
  isLoopbackHostname,
  matchesAllowedHost,
  parseAllowedHost,
  parseHostHeader,
} from './hosts';
import { isLoopbackBind } from './network';

function problemsOf(env: Env): string[] {
  try {
    loadConfig(env, '/srv/app');
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

const KEY = 'network-key-0123456789';

describe('protected mode (config/areas/network.ts)', () => {
  it('tells loopback bind addresses from the others', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', 'LOCALHOST', '::1', '[::1]']) {
      expect([host, isLoopbackBind(host)]).toEqual([host, true]);
    }
    for (const host of ['0.0.0.0', '::', '192.168.1.5', '10.0.0.1', 'example.com', 'my-host']) {
      expect([host, isLoopbackBind(host)]).toEqual([host, false]);
    }
  });

  it('listens on loopback by default, and the defaults need no opt-in', () => {
    expect(loadConfig({}, '/srv/app').network).toEqual({
      allowedHosts: [],
      exposed: false,
      unauthenticatedNetwork: false,
      localSandboxOnNetwork: false,
    });
    expect(problemsOf({ COGNITION_HOST: 'localhost' })).toEqual([]);
  });

  it('refuses a non-loopback address without API keys, naming what, why and the opt-in', () => {
    const problems = problemsOf({
      COGNITION_HOST: '0.0.0.0',
      COGNITION_ALLOW_LOCAL_SANDBOX_ON_NETWORK: 'true',
    });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(
      /^COGNITION_HOST: refused to listen on 0\.0\.0\.0 with no API keys/,
    );
    expect(problems[0]).toContain('not a loopback address');
    expect(problems[0]).toContain('COGNITION_API_KEYS');
    expect(problems[0]).toContain('COGNITION_ALLOW_UNAUTHENTICATED_NETWORK=true');
    expect(problemsOf({ COGNITION_HOST: '::', COGNITION_SANDBOX_BACKEND: 'docker' })).toEqual([
      expect.stringContaining('refused to listen on ::'),
    ]);
  });

  it('refuses the local sandbox on a non-loopback address, even with keys, until allowed', () => {
    const problems = problemsOf({ COGNITION_HOST: '0.0.0.0', COGNITION_API_KEYS: KEY });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^COGNITION_SANDBOX_BACKEND: refused the local sandbox/);
    expect(problems[0]).toContain('no isolation');
    expect(problems[0]).toContain('COGNITION_SANDBOX_BACKEND=docker');
    expect(problems[0]).toContain('COGNITION_ALLOW_LOCAL_SANDBOX_ON_NETWORK=true');
    // Both refusals at once, like every other problem.
    expect(problemsOf({ COGNITION_HOST: '192.168.1.5' })).toEqual([
      expect.stringContaining('COGNITION_HOST: refused'),
      expect.stringContaining('COGNITION_SANDBOX_BACKEND: refused'),
    ]);
  });

  it('starts exposed with keys (or admin keys) and Docker, or with the opt-ins, which warn', () => {
    const keyed = loadConfig(
      {
        COGNITION_HOST: '0.0.0.0',
        COGNITION_ADMIN_API_KEYS: KEY,
        COGNITION_SANDBOX_BACKEND: 'docker',
      },
      '/srv/app',
    );
    expect(keyed.network).toMatchObject({
      exposed: true,
      unauthenticatedNetwork: false,
      localSandboxOnNetwork: false,
    });
    expect(networkWarnings(keyed)).toEqual([]);

    const open = loadConfig(
      {
        COGNITION_HOST: '0.0.0.0',
        COGNITION_ALLOW_UNAUTHENTICATED_NETWORK: 'true',
        COGNITION_ALLOW_LOCAL_SANDBOX_ON_NETWORK: 'yes',
      },
      '/srv/app',
    );
    expect(open.network).toMatchObject({
      unauthenticatedNetwork: true,
      localSandboxOnNetwork: true,
    });
    expect(networkWarnings(open).map((w) => w.setting)).toEqual([
      'COGNITION_ALLOW_UNAUTHENTICATED_NETWORK',
      'COGNITION_ALLOW_LOCAL_SANDBOX_ON_NETWORK',
    ]);

    // On loopback the opt-ins change nothing and say nothing.
    const local = loadConfig({ COGNITION_ALLOW_UNAUTHENTICATED_NETWORK: 'true' }, '/srv/app');
    expect(local.network.unauthenticatedNetwork).toBe(false);
    expect(networkWarnings(local)).toEqual([]);
  });

  it('warns when the open server lets every host or origin in', () => {
    const config = loadConfig(
      { COGNITION_ALLOWED_HOSTS: '*', COGNITION_CORS_ORIGINS: '*' },
      '/srv/app',
    );
    expect(networkWarnings(config).map((w) => w.setting)).toEqual([
      'COGNITION_ALLOWED_HOSTS',
      'COGNITION_CORS_ORIGINS',
    ]);
  });

  it('reads COGNITION_ALLOWED_HOSTS in canonical form and refuses what is not a host', () => {
    const config = loadConfig(
      {
        COGNITION_ALLOWED_HOSTS:
          'Cognition.Example.COM, .internal.example, 10.0.0.5, [2001:DB8::1], *',
      },
      '/srv/app',
    );
    expect(config.network.allowedHosts).toEqual([
      'cognition.example.com',
      '.internal.example',
      '10.0.0.5',
      '2001:db8::1',
      '*',
    ]);
    const problems = problemsOf({
      COGNITION_ALLOWED_HOSTS:
        'https://a.example, a.example:8000, a.example/path, .10.0.0.1, ok.example',
    });
    expect(problems).toHaveLength(4);
    for (const problem of problems) {
      expect(problem).toMatch(/^COGNITION_ALLOWED_HOSTS: ".*" is not a host/);
    }
  });
});

describe('host names (config/areas/hosts.ts)', () => {
  it('canonicalizes hosts and refuses ports, paths and credentials', () => {
    expect(canonicalHostname('LocalHost.')).toBe('localhost');
    expect(canonicalHostname('[::1]')).toBe('::1');
    expect(canonicalHostname('0x7f.1')).toBe('127.0.0.1');
    expect(canonicalHostname('bücher.example')).toBe('xn--bcher-kva.example');
    for (const bad of ['', 'a.example:80', 'a/b', 'user@a.example', 'a b']) {
      expect([bad, canonicalHostname(bad)]).toEqual([bad, null]);
    }
  });

  it('parses Host headers with or without a port', () => {
    expect(parseHostHeader('Example.com:8797')).toEqual({ hostname: 'example.com', port: '8797' });
    expect(parseHostHeader('[::1]:8000')).toEqual({ hostname: '::1', port: '8000' });
    expect(parseHostHeader('127.0.0.1')).toEqual({ hostname: '127.0.0.1', port: '' });
    expect(parseHostHeader('evil.example@127.0.0.1')).toBeNull();
    expect(parseHostHeader('a.example/x')).toBeNull();
  });

  it('knows the loopback names: localhost, *.localhost, 127.0.0.0/8, ::1 (also IPv4-mapped)', () => {
    for (const name of [
      'localhost',
      'app.localhost',
      '127.0.0.1',
      '127.255.0.9',
      '::1',
      '::ffff:7f00:1',
    ]) {
      expect([name, isLoopbackHostname(name)]).toEqual([name, true]);
    }
    for (const name of [
      'localhost.example',
      'notlocalhost',
      '10.0.0.1',
      '0.0.0.0',
      '::',
      '::ffff:a00:1',
    ]) {
      expect([name, isLoopbackHostname(name)]).toEqual([name, false]);
    }
  });

  it('matches allowed hosts exactly, by domain, or all', () => {
    const parsed = ['.example.com', 'api.test', '*'].map(parseAllowedHost);
    expect(parsed).toEqual([
      { kind: 'domain', hostname: 'example.com' },
      { kind: 'exact', hostname: 'api.test' },
      { kind: 'any' },
    ]);
    expect(matchesAllowedHost('example.com', ['.example.com'])).toBe(true);
    expect(matchesAllowedHost('a.b.example.com', ['.example.com'])).toBe(true);
    expect(matchesAllowedHost('badexample.com', ['.example.com'])).toBe(false);
    expect(matchesAllowedHost('api.test', ['api.test'])).toBe(true);
    expect(matchesAllowedHost('x.api.test', ['api.test'])).toBe(false);
    expect(matchesAllowedHost('anything', ['*'])).toBe(true);
    expect(matchesAllowedHost('anything', [])).toBe(false);
  });
});
