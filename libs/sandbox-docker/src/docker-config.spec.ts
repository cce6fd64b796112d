import { SandboxError } from '@cognition/sandbox';
import { createDockerSandbox } from './backend/docker-sandbox';
import { parseByteSize } from './docker-config';
import {
  dockerConnectionFromEnv,
  describeConnection,
  isDockerEngineFailure,
} from './engine/connection';

describe('docker configuration', () => {
  test('parseByteSize understands Docker sizes', () => {
    expect(parseByteSize('512m', 'f')).toBe(512 * 1024 * 1024);
    expect(parseByteSize('1g', 'f')).toBe(1024 ** 3);
    expect(parseByteSize('1.5G', 'f')).toBe(1.5 * 1024 ** 3);
    expect(parseByteSize('65536k', 'f')).toBe(65536 * 1024);
    expect(parseByteSize('1000', 'f')).toBe(1000);
    expect(() => parseByteSize('lots', 'docker.memory')).toThrow(/docker\.memory/);
    expect(() => parseByteSize('0m', 'docker.memory')).toThrow(SandboxError);
  });

  test('invalid settings fail at creation, naming the field', () => {
    expect(() => createDockerSandbox({ memory: 'huge' })).toThrow(/docker\.memory/);
    expect(() => createDockerSandbox({ cpus: 0 })).toThrow(/docker\.cpus/);
    expect(() => createDockerSandbox({ pidsLimit: -1 })).toThrow(/docker\.pidsLimit/);
    expect(() => createDockerSandbox({ user: '0:0' })).toThrow(/must not be root/);
    expect(() => createDockerSandbox({ user: 'sandbox' })).toThrow(/docker\.user/);
    expect(() => createDockerSandbox({ workspacePath: 'relative' })).toThrow(/workspacePath/);
    expect(() => createDockerSandbox({ timeoutMs: 1.5 })).toThrow(/docker\.timeoutMs/);
    expect(() => createDockerSandbox()).not.toThrow();
  });

  test('dockerConnectionFromEnv maps DOCKER_HOST', () => {
    expect(dockerConnectionFromEnv({})).toEqual({ socketPath: '/var/run/docker.sock' });
    expect(dockerConnectionFromEnv({ DOCKER_HOST: 'unix:///run/user/1000/docker.sock' })).toEqual({
      socketPath: '/run/user/1000/docker.sock',
    });
    expect(dockerConnectionFromEnv({ DOCKER_HOST: 'tcp://10.0.0.5:2375' })).toEqual({
      host: '10.0.0.5',
      port: 2375,
      protocol: 'http',
    });
    expect(
      dockerConnectionFromEnv({ DOCKER_HOST: 'tcp://docker:2376', DOCKER_TLS_VERIFY: '1' }),
    ).toEqual({ host: 'docker', port: 2376, protocol: 'https' });
    expect(() => dockerConnectionFromEnv({ DOCKER_HOST: 'ssh://me@host' })).toThrow(/DOCKER_HOST/);
  });

  test('describeConnection names the socket or the host', () => {
    expect(describeConnection({ socketPath: '/x.sock' })).toBe('unix:///x.sock (socket)');
    expect(describeConnection({ host: 'h', port: 1, protocol: 'http' })).toBe(
      'http://h:1 (DOCKER_HOST)',
    );
  });

  test('only engine failures (no answer, 5xx) count against the circuit breaker', () => {
    expect(isDockerEngineFailure(new Error('connect ENOENT /var/run/docker.sock'))).toBe(true);
    expect(isDockerEngineFailure({ statusCode: 500 })).toBe(true);
    expect(isDockerEngineFailure({ statusCode: 404 })).toBe(false);
    expect(isDockerEngineFailure({ statusCode: 409 })).toBe(false);
  });
});
