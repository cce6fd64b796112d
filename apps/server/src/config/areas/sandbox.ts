import path from 'node:path';
import type { AreaBuilder, SettingsReader } from '../settings';
import { need } from '../settings';
import type { ServerConfig } from '../types';

/** Where tools execute (`COGNITION_SANDBOX_BACKEND`) and the Docker engine and limits. */
export function readSandbox(settings: SettingsReader): AreaBuilder<Pick<ServerConfig, 'sandbox'>> {
  const backend = settings.read('COGNITION_SANDBOX_BACKEND');
  const image = settings.read('COGNITION_DOCKER_IMAGE');
  const network = settings.read('COGNITION_DOCKER_NETWORK');
  const memory = settings.read('COGNITION_DOCKER_MEMORY_LIMIT');
  const cpu = settings.read('COGNITION_DOCKER_CPU_LIMIT');
  const timeout = settings.read('COGNITION_DOCKER_TIMEOUT');
  const dockerHost = settings.read('DOCKER_HOST');
  const tlsVerify = settings.read('DOCKER_TLS_VERIFY');
  const certPath = settings.read('DOCKER_CERT_PATH');
  return () => ({
    sandbox: {
      backend: need(backend),
      docker: {
        image: need(image),
        network: need(network),
        memoryLimit: need(memory),
        cpuLimit: need(cpu),
        timeoutSeconds: need(timeout),
        dockerHost: dockerHost ?? null,
        tlsVerify: need(tlsVerify),
        certPath: certPath === undefined ? null : path.resolve(settings.cwd, certPath),
      },
    },
  });
}
