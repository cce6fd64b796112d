import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestApp, TestAppOptions } from './test-app';
import { createTestApp } from './test-app';

/** A test app served on a loopback port, for specs that talk HTTP to it with fetch. */
export interface ListeningTestApp {
  t: TestApp;
  /** `http://127.0.0.1:<port>` */
  base: string;
  /** Closes the app, its open connections (streams) and the listener. */
  close(): Promise<void>;
}

export async function listenTestApp(options: TestAppOptions = {}): Promise<ListeningTestApp> {
  const t = await createTestApp(options);
  const server = createServer(t.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    t,
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      await t.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
